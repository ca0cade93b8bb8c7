import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildImage, ensureBootFiles } from '../../src/core/sandbox/build.js';
import type { BootFiles } from '../../src/core/sandbox/build.js';
import { findExecMain } from '../../src/core/sandbox/enforcement.js';

/**
 * What the real-microVM suites share: the capability check that decides whether they run (a capability skip,
 * printed, that DOCDEX_REQUIRE_SANDBOX=1 turns into a failure), the build cache kept between runs
 * (DOCDEX_SANDBOX_TEST_CACHE, default $TMPDIR/docdex-sandbox-cache-<uid>).
 */

export const REQUIRE_SANDBOX = process.env.DOCDEX_REQUIRE_SANDBOX === '1';
export const SANDBOX_CACHE = process.env.DOCDEX_SANDBOX_TEST_CACHE ?? path.join(os.tmpdir(), `docdex-sandbox-cache-${process.getuid?.() ?? 0}`);

function which(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** What the host lacks for the microVM; with `built`, also docdex's build (the shim runs dist/core/sandbox/exec-main.js). */
export function missingSandboxCapabilities(options: { built?: boolean } = {}): string[] {
  const missing: string[] = [];
  if (process.platform !== 'linux') missing.push('a Linux host');
  for (const [cmd, pkg] of [
    ['qemu-system-x86_64', 'qemu-system-x86'],
    ['bwrap', 'bubblewrap'],
    ['cc', 'gcc + libc6-dev'],
    ['mkfs.ext4', 'e2fsprogs'],
  ] as const) {
    if (!which(cmd)) missing.push(`${cmd} (${pkg})`);
  }
  if (!existsSync('/bin/busybox')) missing.push('/bin/busybox (busybox-static)');
  if (!existsSync(path.join(SANDBOX_CACHE, 'kernel', 'current', 'vmlinux')) && !which('apt-get')) missing.push('a cached kernel or apt-get to download one');
  if (options.built && findExecMain() === undefined) missing.push('a docdex build (npm run build) for dist/core/sandbox/exec-main.js');
  return missing;
}

/**
 * `<home>/sandbox` with the shared kernel, boot and image caches linked in, the boot files built, and the busybox
 * test image; returns the boot files and the image's pinned reference.
 */
export async function prepareSandboxHome(home: string): Promise<{ boot: BootFiles; image: string }> {
  await mkdir(path.join(home, 'sandbox'), { recursive: true });
  for (const sub of ['kernel', 'boot', 'images']) {
    await mkdir(path.join(SANDBOX_CACHE, sub), { recursive: true });
    await symlink(path.join(SANDBOX_CACHE, sub), path.join(home, 'sandbox', sub));
  }
  const boot = await ensureBootFiles(path.join(home, 'sandbox'));
  const image = (await buildImage(path.join(home, 'sandbox'), { flavor: 'busybox', name: 'docdex-test' })).ref;
  return { boot, image };
}
