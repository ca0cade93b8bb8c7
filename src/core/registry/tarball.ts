import { Transform, pipeline } from 'node:stream';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { UserError, ValidationError } from '../errors.js';
import { displayUrl, openRegistryUrl, UNREADABLE, unusableAnswer } from './http.js';
import type { RegistryResponse } from './http.js';
import { registryUnavailable } from './problems.js';
import type { RegistryConfig, RegistryRequestOptions } from './types.js';

/**
 * A package tarball's README, the fallback source when the repository cannot be reached: the `.tgz` is read
 * as a stream (download, gunzip, untar) and dropped as soon as the README has been read. Nothing is written
 * to disk; entry names are checked all the same, so a hostile archive's `../` or absolute names are never
 * taken for the README. The download, the unpacked bytes and the README each have a cap.
 */

const MAX_DOWNLOAD_BYTES = 32 * 1024 * 1024;
const MAX_UNPACKED_BYTES = 256 * 1024 * 1024;
const MAX_README_BYTES = 4 * 1024 * 1024;
const README_NAME = /^readme(\.[a-z0-9]+){0,2}$/i;
// One safe path segment: no separators, no `.`/`..`, no control characters.
const SAFE_SEGMENT = /^(?!\.{1,2}$)[^/\\\p{Cc}]{1,255}$/u;

class CapExceeded extends Error {}

function byteCap(limit: number, what: string): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > limit) callback(new CapExceeded(`the ${what} is larger than ${Math.round(limit / 1024 / 1024)} MiB`));
      else callback(null, chunk);
    },
  });
}

/** The README's file name when `name` is `<top folder>/README*` with safe segments, else undefined. */
export function readmeEntryName(name: string): string | undefined {
  const parts = name.split('/');
  if (parts.length !== 2 || !parts.every((p) => SAFE_SEGMENT.test(p))) return undefined;
  return README_NAME.test(parts[1]!) ? parts[1] : undefined;
}

async function readEntry(entry: AsyncIterable<unknown>): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Drained to its end even when over the cap: the archive's next entry starts after it.
  for await (const chunk of entry) {
    const bytes = chunk as Buffer;
    size += bytes.length;
    if (size <= MAX_README_BYTES) chunks.push(bytes);
  }
  return size > MAX_README_BYTES
    ? undefined
    : Buffer.concat(chunks)
        .toString('utf8')
        .replace(/^\uFEFF/, '');
}

async function findReadme(extract: tar.Extract): Promise<{ filename: string; content: string } | undefined> {
  for await (const entry of extract) {
    const filename = entry.header.type === 'file' ? readmeEntryName(entry.header.name) : undefined;
    if (filename !== undefined) {
      const content = await readEntry(entry);
      if (content !== undefined) return { filename, content };
    }
    entry.resume();
  }
  return undefined;
}

function unpackFailure(response: RegistryResponse, error: unknown): UserError {
  if (error instanceof UserError) return error;
  if (error instanceof CapExceeded) return unusableAnswer(response, error.message);
  const code = (error as { code?: string }).code ?? '';
  if (code.startsWith('Z_') || /gzip|header|tar/i.test((error as Error).message ?? '')) return unusableAnswer(response, 'the tarball is not a gzip-compressed tar archive');
  return registryUnavailable(displayUrl(response.url), response.trusted ? ((error as Error).message ?? String(error)) : UNREADABLE, error);
}

/**
 * The top-level README (`package/README*`) of an npm package tarball, or undefined when it has none. Throws
 * registry_unavailable when the tarball cannot be downloaded and bad_gateway when it is not a readable archive.
 */
export async function fetchTarballReadme(config: RegistryConfig, tarballUrl: string, options: RegistryRequestOptions = {}): Promise<{ filename: string; content: string } | undefined> {
  const parsed = URL.canParse(tarballUrl) ? new URL(tarballUrl) : undefined;
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw new ValidationError(`${JSON.stringify(tarballUrl.slice(0, 200))} is not an http(s) tarball URL.`, { details: [{ path: 'tarball', message: 'not an http(s) URL' }] });
  }
  const shown = displayUrl(tarballUrl);
  const response = await openRegistryUrl(config, tarballUrl, 'application/octet-stream', options);
  try {
    // Off the registry's origin, a status would tell that something answers there: one generic reason instead.
    if (response.status < 200 || response.status >= 300) {
      if (!response.trusted) throw registryUnavailable(shown, UNREADABLE);
      if (response.status === 404 || response.status === 410) throw new UserError(`The package tarball ${shown} does not exist (HTTP ${response.status}).`, { code: 'package_not_found' });
      throw registryUnavailable(shown, `it answered HTTP ${response.status}`);
    }
    const extract = tar.extract();
    let failure: unknown;
    pipeline(response.body as Readable, byteCap(MAX_DOWNLOAD_BYTES, 'tarball'), createGunzip(), byteCap(MAX_UNPACKED_BYTES, 'unpacked tarball'), extract, (error) => {
      failure ??= error;
    });
    try {
      return await findReadme(extract);
    } catch (error) {
      throw unpackFailure(response, failure ?? error);
    }
  } finally {
    await response.close();
  }
}
