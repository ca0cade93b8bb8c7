import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { admittedAddresses, parseAllowHosts } from '../net/policy.js';
import type { Resolve } from '../net/policy.js';
import { pullImage } from './build.js';
import type { BuildOptions } from './build.js';
import type { OciRef } from './oci-ref.js';
import { SandboxUnavailableError } from './unavailable.js';

/**
 * Registry images (SANDBOX_IMAGE=host[:port]/path[:tag][@sha256:<hex>]). The first VM boot that needs one pulls
 * it with skopeo and umoci (sandbox/scripts/pull-image.sh); later boots find it in the store without a pull, as
 * `docker run` does with an image it has. A tag is therefore resolved once; pin a digest to be sure which image
 * runs. Attestation compares the reference string; the digest it resolved to is recorded next to it.
 */

export interface PulledImage {
  ref: string;
  /** The image's rootfs.img in the store. */
  path: string;
  /** `sha256:<hex>`: the manifest digest the reference resolved to when it was pulled. */
  digest: string;
  /** False when the store already had it. */
  pulled: boolean;
}

/** The store directory of a reference: a hash, so no reference can name a path. */
export function ociStoreDir(cacheDir: string, ref: string): string {
  return path.join(cacheDir, 'images', 'oci', createHash('sha256').update(ref).digest('hex'));
}

/** The stored image of `ref`, if a pull finished before. */
export async function storedRegistryImage(cacheDir: string, ref: string): Promise<Omit<PulledImage, 'pulled'> | undefined> {
  const dir = ociStoreDir(cacheDir, ref);
  const digest = (await readFile(path.join(dir, 'current'), 'utf8').catch(() => '')).trim();
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) return undefined;
  const file = path.join(dir, digest.slice('sha256:'.length), 'rootfs.img');
  const info = await stat(file).catch(() => undefined);
  return info?.isFile() ? { ref, path: file, digest } : undefined;
}

function isLoopback(address: string): boolean {
  const parsed = ipaddr.parse(address);
  const effective = parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed;
  return effective.range() === 'loopback';
}

/**
 * The outbound policy for a registry: public addresses, or what CRAWL_ALLOW_HOSTS lists. Unlike a crawl the
 * user starts, a pull gets no implicit loopback permission: SANDBOX_IMAGE is read by the runner on every boot,
 * wherever it came from, so a loopback registry must be listed. Answers whether the registry speaks plain HTTP,
 * which is allowed only when every admitted address is loopback (the traffic never leaves the machine).
 */
export async function checkRegistry(oci: OciRef, allowHosts: readonly string[], resolve?: Resolve): Promise<{ plainHttp: boolean }> {
  let addresses: string[];
  try {
    addresses = await admittedAddresses(oci.host, { allow: parseAllowHosts(allowHosts.join(',')), allowLoopback: false }, resolve);
  } catch (error) {
    const reason = (error as Error).message.replace(/; add it to CRAWL_ALLOW_HOSTS to crawl internal docs$/, '');
    throw new SandboxUnavailableError(`cannot pull ${oci.ref}: the registry ${oci.registry} is not allowed by the outbound policy (${reason})`, {
      hint: `Add ${oci.host} to CRAWL_ALLOW_HOSTS to allow this registry, or use a registry on a public address.`,
    });
  }
  return { plainHttp: addresses.length > 0 && addresses.every((a) => net.isIP(a) !== 0 && isLoopback(a)) };
}

/**
 * The reason in a failed pull's output: skopeo's or umoci's fatal message (logrus `msg="..."`), or the script's own
 * `error:` line, without the progress lines.
 */
export function pullFailureReason(output: string): string {
  const lines = output
    .replace(/^sandbox\/scripts\/pull-image\.sh failed \(exit \S+\): /, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^\[sandbox-build\] (?!error: )/.test(line));
  const reasons = lines.map((line) => {
    const msg = /\bmsg="((?:[^"\\]|\\.)*)"/.exec(line);
    if (msg) return msg[1]!.replace(/\\(.)/g, '$1');
    return line.replace(/^\[sandbox-build\] error: /, '');
  });
  return reasons.join('; ') || 'the pull failed without a message';
}

/** The stored image of `oci`, pulled first when the store lacks it. Fails closed with the reason. */
export async function ensureRegistryImage(cacheDir: string, oci: OciRef, policy: { allowHosts: readonly string[]; resolve?: Resolve }, options: BuildOptions = {}): Promise<PulledImage> {
  const stored = await storedRegistryImage(cacheDir, oci.ref);
  if (stored) return { ...stored, pulled: false };
  const { plainHttp } = await checkRegistry(oci, policy.allowHosts, policy.resolve);
  const key = path.basename(ociStoreDir(cacheDir, oci.ref));
  try {
    const built = await pullImage(cacheDir, { ref: oci.ref, key, plainHttp }, options);
    return { ref: oci.ref, path: built.path, digest: built.digest, pulled: true };
  } catch (error) {
    if (options.signal?.aborted) throw new SandboxUnavailableError(`pulling ${oci.ref} did not finish within SANDBOX_START_TIMEOUT_MS`, { cause: error });
    const detail = pullFailureReason((error as Error).message);
    throw new SandboxUnavailableError(`cannot pull ${oci.ref}: ${detail}`, {
      hint: 'Check that the reference exists (skopeo inspect docker://<reference>), that skopeo, umoci and e2fsprogs are installed, and that registry credentials are in the containers auth file if it needs them.',
      cause: error,
    });
  }
}
