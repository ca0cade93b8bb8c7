import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { UserError } from '../errors.js';

/** The guest-side sources and build scripts; the same relative place from src/ and from dist/. */
export const SANDBOX_SOURCE_DIR = fileURLToPath(new URL('../../../sandbox/', import.meta.url));

export interface BootFiles {
  dir: string;
  /** Uncompressed vmlinux, booted through its PVH entry. */
  kernel: string;
  initramfs: string;
  key: string;
  kernelRelease: string;
  kernelPackage: string;
  agent: string;
}

export type ImageFlavor = 'busybox' | 'debian';

export interface BuiltImage {
  ref: string;
  path: string;
  digest: string;
  /** The debian flavor's browser, as installed: `chromium <Debian version>`. */
  browser?: string;
}

export interface BuildOptions {
  /** Receives the scripts' progress lines (stderr). */
  onLog?: (line: string) => void;
  signal?: AbortSignal;
}

function parseKeyValues(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) out[line.slice(0, at)] = line.slice(at + 1);
  }
  return out;
}

const BUILD_HINT =
  'The sandbox build needs: apt-get install --no-install-recommends qemu-system-x86 busybox-static bubblewrap gcc libc6-dev e2fsprogs xz-utils (and debootstrap for the Debian image).';

async function runScript(script: string, args: string[], options: BuildOptions, hint = BUILD_HINT): Promise<Record<string, string>> {
  const child = execa(`${SANDBOX_SOURCE_DIR}scripts/${script}`, args, {
    reject: false,
    stdin: 'ignore',
    ...(options.signal ? { cancelSignal: options.signal } : {}),
  });
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    tail = (tail + text).slice(-4000);
    if (options.onLog) for (const line of text.split('\n')) if (line.trim()) options.onLog(line);
  });
  const result = await child;
  if (result.exitCode !== 0) {
    const last = tail.trim().split('\n').slice(-5).join('\n');
    throw new UserError(`sandbox/scripts/${script} failed (exit ${String(result.exitCode ?? result.signal)}): ${last}`, {
      code: 'sandbox_build_failed',
      hint,
    });
  }
  return parseKeyValues(String(result.stdout));
}

/** Kernel + initramfs, built once and cached under `<cacheDir>/boot/<inputs hash>`. */
export async function ensureBootFiles(cacheDir: string, options: BuildOptions = {}): Promise<BootFiles> {
  const kv = await runScript('build-boot.sh', [cacheDir], options);
  const need = (k: string): string => {
    const v = kv[k];
    if (v === undefined) throw new Error(`build-boot.sh did not report ${k}`);
    return v;
  };
  return {
    dir: need('dir'),
    kernel: need('kernel'),
    initramfs: need('initramfs'),
    key: need('key'),
    kernelRelease: need('kernel_release'),
    kernelPackage: need('kernel_package'),
    agent: need('agent'),
  };
}

export interface ImageRecipe {
  flavor: ImageFlavor;
  name?: string;
  suite?: string;
  mirror?: string;
  /** The Debian version of chromium for the debian flavor (spec: Versioning); unset = the suite's current one. */
  chromiumVersion?: string;
}

function recipeArgs(image: ImageRecipe): string[] {
  const args = ['--flavor', image.flavor];
  if (image.name) args.push('--name', image.name);
  if (image.suite) args.push('--suite', image.suite);
  if (image.mirror) args.push('--mirror', image.mirror);
  if (image.chromiumVersion) args.push('--chromium-version', image.chromiumVersion);
  return args;
}

export async function buildImage(cacheDir: string, image: ImageRecipe, options: BuildOptions = {}): Promise<BuiltImage> {
  const kv = await runScript('build-image.sh', [...recipeArgs(image), cacheDir], options);
  if (!kv.ref || !kv.path || !kv.digest) throw new Error('build-image.sh did not report ref, path and digest');
  return { ref: kv.ref, path: kv.path, digest: kv.digest, ...(kv.browser ? { browser: kv.browser } : {}) };
}

/** What build-image.sh would install, without building: the Debian packages and the pinned browser package. */
export async function imageRecipe(image: ImageRecipe): Promise<{ packages: string[]; browser: string | undefined }> {
  const kv = await runScript('build-image.sh', [...recipeArgs(image), '--print-recipe'], {});
  return { packages: (kv.packages ?? '').split(',').filter(Boolean), browser: kv.browser || undefined };
}

/**
 * Pulls a registry image into the store (sandbox/scripts/pull-image.sh: skopeo copy, umoci unpack, the same
 * ext4 packing as a built image). The caller validated `ref` and checked the registry against the outbound
 * policy; `key` is the SHA-256 of `ref`, the store directory.
 */
export async function pullImage(cacheDir: string, pull: { ref: string; key: string; plainHttp: boolean }, options: BuildOptions = {}): Promise<BuiltImage> {
  const args = [...(pull.plainHttp ? ['--plain-http'] : []), '--key', pull.key, '--', cacheDir, pull.ref];
  const kv = await runScript('pull-image.sh', args, options, 'Pulling an image needs: apt-get install --no-install-recommends skopeo umoci e2fsprogs, and the registry reachable.');
  if (!kv.ref || !kv.path || !kv.digest) throw new Error('pull-image.sh did not report ref, path and digest');
  return { ref: kv.ref, path: kv.path, digest: kv.digest };
}
