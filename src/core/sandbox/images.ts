import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { SandboxUnavailableError } from './unavailable.js';

/** Image used when SANDBOX_IMAGE is unset: the newest local build of `docdex sandbox image build`. */
export const DEFAULT_IMAGE_NAME = 'docdex-debian';

const NAME = /^[a-z0-9][a-z0-9._-]*$/;
const PINNED = /^([a-z0-9][a-z0-9._-]*)@sha256:([0-9a-f]{64})$/;

export interface ImageRef {
  name: string;
  digest: string;
  /** `name@sha256:<digest>`, the string attestation compares. */
  ref: string;
}

export function parseImageRef(ref: string): ImageRef | undefined {
  const m = PINNED.exec(ref);
  return m ? { name: m[1]!, digest: m[2]!, ref } : undefined;
}

/** Where build-image.sh stores an image (sandbox/scripts/build-image.sh keeps the same layout). */
export function imageDir(cacheDir: string, image: ImageRef): string {
  return path.join(cacheDir, 'images', image.name, image.digest);
}

export function imagePath(cacheDir: string, image: ImageRef): string {
  return path.join(imageDir(cacheDir, image), 'rootfs.img');
}

/**
 * Turns SANDBOX_IMAGE into a pinned reference. A bare name follows the local tag written by the newest build;
 * that is convenient but floats, and attestation only compares the reference string, so production should
 * pin `name@sha256:<digest>`.
 */
export async function resolveImageRef(cacheDir: string, spec: string | undefined): Promise<ImageRef> {
  const wanted = spec ?? DEFAULT_IMAGE_NAME;
  const pinned = parseImageRef(wanted);
  if (pinned) return pinned;
  if (!NAME.test(wanted)) {
    throw new SandboxUnavailableError(`SANDBOX_IMAGE=${JSON.stringify(wanted)} is neither an image name nor name@sha256:<64 hex digits>`);
  }
  let tagged: string;
  try {
    tagged = (await readFile(path.join(cacheDir, 'images', 'tags', wanted), 'utf8')).trim();
  } catch {
    throw new SandboxUnavailableError(`no local image named ${wanted}`, {
      hint: `Build it with "docdex sandbox image build --name ${wanted}", or set SANDBOX_IMAGE to a stored name@sha256:<digest>.`,
    });
  }
  const resolved = parseImageRef(tagged);
  if (!resolved) throw new SandboxUnavailableError(`the local tag ${wanted} is corrupt (${JSON.stringify(tagged)})`);
  return resolved;
}

/** Fails closed when the pinned image is not in the local store. */
export async function requireImage(cacheDir: string, image: ImageRef): Promise<string> {
  const file = imagePath(cacheDir, image);
  try {
    if ((await stat(file)).isFile()) return file;
  } catch {
    // fall through
  }
  throw new SandboxUnavailableError(`image ${image.ref} is not in the local store (${file})`, {
    hint: `Build it with "docdex sandbox image build --name ${image.name}"; the digest must match.`,
  });
}
