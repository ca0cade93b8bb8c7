import { execFile, spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeVm } from '../../src/commands/sandbox/status.js';
import { ensureBootFiles } from '../../src/core/sandbox/build.js';
import { ociStoreDir } from '../../src/core/sandbox/oci-pull.js';
import { RunnerDaemon } from '../../src/core/sandbox/runner-daemon.js';
import { sandboxExec, sandboxStatus } from '../../src/core/sandbox/service.js';
import { sandboxRoots } from '../../src/core/sandbox/settings.js';
import type { AccelMode, SandboxSettings } from '../../src/core/sandbox/settings.js';
import { UNAVAILABLE_PREFIX } from '../../src/core/sandbox/unavailable.js';
import { REQUIRE_SANDBOX, SANDBOX_CACHE, missingSandboxCapabilities } from './vm-host.js';

/**
 * SANDBOX_IMAGE naming a registry image (spec: "any OCI image reference the host can pull"), end to end: a small
 * busybox image is laid out with umoci, pushed with skopeo to a real registry (Debian's docker-registry) on
 * 127.0.0.1, and the real microVM boots from what the runner pulls. Skipped with the reason printed when the host
 * lacks the microVM or skopeo, umoci or docker-registry; DOCDEX_REQUIRE_SANDBOX=1 makes that a failure.
 */

const exec = promisify(execFile);
const ACCEL = (process.env.SANDBOX_ACCEL as AccelMode | undefined) ?? 'auto';

function which(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}
const missing = [
  ...missingSandboxCapabilities(),
  ...[
    ['skopeo', 'skopeo'],
    ['umoci', 'umoci'],
    ['docker-registry', 'docker-registry'],
  ]
    .filter(([cmd]) => !which(cmd!))
    .map(([cmd, pkg]) => `${cmd} (${pkg})`),
];
const skip = missing.length > 0 && !REQUIRE_SANDBOX;
if (skip) console.log(`skipping the registry image tests: missing ${missing.join(', ')} (set DOCDEX_REQUIRE_SANDBOX=1 to make this a failure)`);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitForRegistry(port: number): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/v2/`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    if (Date.now() > until) throw new Error('docker-registry did not answer on /v2/ within 30 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A busybox image in an OCI layout, made with umoci, carrying a marker only this run knows. */
async function layBusyboxImage(dir: string, marker: string): Promise<string> {
  const layout = path.join(dir, 'layout');
  const bundle = path.join(dir, 'bundle');
  await exec('umoci', ['init', '--layout', layout]);
  await exec('umoci', ['new', '--image', `${layout}:bb`]);
  await exec('umoci', ['unpack', '--rootless', '--image', `${layout}:bb`, bundle]);
  const root = path.join(bundle, 'rootfs');
  for (const d of ['bin', 'etc', 'root', 'tmp']) await mkdir(path.join(root, d), { recursive: true });
  await copyFile('/bin/busybox', path.join(root, 'bin', 'busybox'));
  await chmod(path.join(root, 'bin', 'busybox'), 0o755);
  for (const applet of ['sh', 'cat', 'uname', 'hostname', 'id', 'echo', 'ls']) await symlink('busybox', path.join(root, 'bin', applet));
  await writeFile(path.join(root, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
  await writeFile(path.join(root, 'etc', 'oci-marker'), `${marker}\n`);
  // An image's own reference file must not survive: the store writes the reference it was pulled as.
  await writeFile(path.join(root, 'etc', 'mgr-image-ref'), 'forged@sha256:' + '0'.repeat(64) + '\n');
  await exec('umoci', ['repack', '--image', `${layout}:bb`, bundle]);
  return `${layout}:bb`;
}

describe.skipIf(skip)('a registry image as SANDBOX_IMAGE (real docker-registry on loopback, real microVM)', () => {
  let home: string;
  let ws: string;
  let registry: ChildProcess | undefined;
  let port: number;
  let daemon: RunnerDaemon;
  let pushedDigest: string;
  const marker = randomBytes(8).toString('hex');

  const settings = (image: string, allowHosts: string[]): SandboxSettings => ({
    workspacePath: ws,
    roots: sandboxRoots(ws),
    image,
    accel: ACCEL,
    execUser: undefined,
    startTimeoutMs: 180_000,
    memoryMib: 256,
    cpus: 1,
    cacheDir: path.join(home, 'sandbox'),
    stateDir: path.join(home, 'sandbox', 'run'),
    allowHosts,
  });

  async function sh(cmd: string, s: SandboxSettings): Promise<{ code: number; stdout: string; stderr: string; unavailable?: string }> {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    stdout.on('data', (c: Buffer) => out.push(c));
    stderr.on('data', (c: Buffer) => err.push(c));
    const handle = sandboxExec(s, { workdir: Buffer.from(path.join(ws, 'repos')), env: [], argv: ['sh', '-c', cmd].map((a) => Buffer.from(a)), timeoutMs: 0 }, { stdout, stderr });
    const outcome = await handle.done;
    return { code: outcome.exitCode, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString(), ...(outcome.unavailable ? { unavailable: outcome.unavailable } : {}) };
  }

  beforeAll(async () => {
    if (missing.length > 0) throw new Error(`DOCDEX_REQUIRE_SANDBOX=1 but the host lacks: ${missing.join(', ')}`);
    home = await mkdtemp(path.join(os.tmpdir(), 'dxoci-'));
    ws = await mkdtemp(path.join(os.tmpdir(), 'dxows-'));
    await mkdir(path.join(ws, 'repos'), { recursive: true });
    await mkdir(path.join(home, 'sandbox'), { recursive: true });
    // The kernel and boot files are shared with the other microVM suites; the image store is this run's own, so the pull really happens.
    for (const sub of ['kernel', 'boot']) {
      await mkdir(path.join(SANDBOX_CACHE, sub), { recursive: true });
      await symlink(path.join(SANDBOX_CACHE, sub), path.join(home, 'sandbox', sub));
    }
    await ensureBootFiles(path.join(home, 'sandbox'));

    port = await freePort();
    const regDir = path.join(home, 'registry');
    await mkdir(path.join(regDir, 'store'), { recursive: true });
    const config = path.join(regDir, 'config.yml');
    await writeFile(config, `version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: ${path.join(regDir, 'store')}\nhttp:\n  addr: 127.0.0.1:${port}\n`);
    registry = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    await waitForRegistry(port);

    const source = await layBusyboxImage(path.join(home, 'oci'), marker);
    await exec('skopeo', ['copy', '--quiet', '--dest-tls-verify=false', `oci:${source}`, `docker://127.0.0.1:${port}/docdex/busybox:1`]);
    pushedDigest = (await exec('skopeo', ['inspect', '--tls-verify=false', '--format', '{{.Digest}}', `docker://127.0.0.1:${port}/docdex/busybox:1`])).stdout.trim();
    expect(pushedDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    daemon = await RunnerDaemon.start({ stateDir: path.join(home, 'sandbox', 'run') });
  }, 15 * 60_000);

  afterAll(async () => {
    await daemon?.close();
    registry?.kill('SIGTERM');
    if (home) await rm(home, { recursive: true, force: true });
    if (ws) await rm(ws, { recursive: true, force: true });
  }, 60_000);

  it('refuses a loopback registry that CRAWL_ALLOW_HOSTS does not list, before anything is pulled', async () => {
    const ref = `127.0.0.1:${port}/docdex/busybox:1`;
    const r = await sh('echo ran', settings(ref, []));
    expect(r.code).toBe(125);
    expect(r.stdout).toBe('');
    expect(r.unavailable).toContain(UNAVAILABLE_PREFIX);
    expect(r.unavailable).toMatch(/registry 127\.0\.0\.1:\d+ is not allowed by the outbound policy/);
    expect(existsSync(ociStoreDir(path.join(home, 'sandbox'), ref))).toBe(false);
  });

  it(
    'pulls the tagged image, boots the microVM from it and runs a command; status records the digest',
    async () => {
      const ref = `127.0.0.1:${port}/docdex/busybox:1`;
      const s = settings(ref, ['127.0.0.1']);
      const r = await sh('cat /etc/oci-marker; cat /etc/mgr-image-ref; hostname', s);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout.trim().split('\n')).toEqual([marker, ref, 'mgr-workspace']);
      const status = await sandboxStatus(s);
      expect(status.config?.imageRef).toBe(ref);
      expect(status.imageDigest).toBe(pushedDigest);
      expect(status.attestation?.mismatches).toEqual([]);
      expect(describeVm(status)).toContain(`  image:   ${ref} (${pushedDigest})`);
    },
    10 * 60_000,
  );

  it(
    'pins the digest: a new reference string fails attestation, and the VM is recreated from the pinned image',
    async () => {
      const before = await sh('cat /proc/sys/kernel/random/boot_id', settings(`127.0.0.1:${port}/docdex/busybox:1`, ['127.0.0.1']));
      const pinned = `127.0.0.1:${port}/docdex/busybox@${pushedDigest}`;
      const r = await sh('cat /etc/mgr-image-ref; cat /proc/sys/kernel/random/boot_id; cat /etc/oci-marker', settings(pinned, ['127.0.0.1']));
      expect(r.code).toBe(0);
      const [imageRef, bootId, seen] = r.stdout.trim().split('\n');
      expect(imageRef).toBe(pinned);
      expect(bootId).not.toBe(before.stdout.trim());
      expect(seen).toBe(marker);
    },
    10 * 60_000,
  );

  it(
    'fails closed with the reason when the reference cannot be pulled',
    async () => {
      const r = await sh('echo ran', settings(`127.0.0.1:${port}/docdex/busybox:missing`, ['127.0.0.1']));
      expect(r.code).toBe(125);
      expect(r.stdout).toBe('');
      expect(r.unavailable).toMatch(/cannot pull 127\.0\.0\.1:\d+\/docdex\/busybox:missing: .*manifest unknown/);
      expect(r.unavailable).not.toMatch(/\[sandbox-build\]|level=fatal|\n/);
    },
    5 * 60_000,
  );
});
