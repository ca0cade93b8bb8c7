import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseOciRef } from './oci-ref.js';
import type { OciRef } from './oci-ref.js';
import { SandboxUnavailableError } from './unavailable.js';

/** Image used when SANDBOX_IMAGE is unset: the newest local build of `docdex sandbox image build`. */
export const DEFAULT_IMAGE_NAME = 'docdex-debian';

const NAME = /^[a-z0-9][a-z0-9._-]*$/;
const PINNED = /^([a-z0-9][a-z0-9._-]*)@sha256:([0-9a-f]{64})$/;

export interface ImageRef {
  kind: 'local';
  name: string;
  digest: string;
  /** `name@sha256:<digest>`, the string attestation compares. */
  ref: string;
}

export function parseImageRef(ref: string): ImageRef | undefined {
  const m = PINNED.exec(ref);
  return m ? { kind: 'local', name: m[1]!, digest: m[2]!, ref } : undefined;
}

/** An image pulled from a registry (oci-pull.ts); its reference is the string attestation compares. */
export interface RegistryImage {
  kind: 'registry';
  ref: string;
  oci: OciRef;
}

/** SANDBOX_IMAGE when it names a registry image (it names its registry host); undefined for local names. */
export function parseRegistryImage(ref: string): RegistryImage | undefined {
  const oci = parseOciRef(ref);
  return oci ? { kind: 'registry', ref, oci } : undefined;
}

/** Where build-image.sh stores an image (sandbox/scripts/build-image.sh keeps the same layout). */
export function imageDir(cacheDir: string, image: ImageRef): string {
  return path.join(cacheDir, 'images', image.name, image.digest);
}

export function imagePath(cacheDir: string, image: ImageRef): string {
  return path.join(imageDir(cacheDir, image), 'rootfs.img');
}

/**
 * Turns SANDBOX_IMAGE into the reference the VM is attested against. A bare name follows the local tag written
 * by the newest build; that is convenient but floats, and attestation only compares the reference string, so
 * production should pin `name@sha256:<digest>`. A registry reference stays as given: the runner pulls it when
 * it boots a VM (nothing here touches the network, since this runs for every command).
 */
export async function resolveImageRef(cacheDir: string, spec: string | undefined): Promise<ImageRef | RegistryImage> {
  const wanted = spec ?? DEFAULT_IMAGE_NAME;
  const pinned = parseImageRef(wanted);
  if (pinned) return pinned;
  const registry = parseRegistryImage(wanted);
  if (registry) return registry;
  if (!NAME.test(wanted)) {
    throw new SandboxUnavailableError(`SANDBOX_IMAGE=${JSON.stringify(wanted.slice(0, 300))} is neither a local image name, name@sha256:<64 hex digits>, nor a registry reference`, {
      hint: 'A registry reference names its registry host: registry.example.com/team/image:tag, or pinned, registry.example.com/team/image@sha256:<64 hex digits>.',
    });
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
