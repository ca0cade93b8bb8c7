import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import type { Readable } from 'node:stream';
import type pg from 'pg';
import { request } from 'undici';
import { UserError } from '../errors.js';
import { createOutboundAgent } from '../net/outbound.js';
import { isOutboundRefusal } from '../net/policy.js';
import type { OutboundPolicy } from '../net/policy.js';
import { onTypedSite } from '../net/provenance.js';
import { exportPack } from './export.js';
import type { ExportOptions, ExportSummary } from './export.js';
import { importPack } from './import.js';
import type { ImportOptions, ImportSummary } from './import.js';

/** Where a pack comes from: a file path or an http(s) URL. */
export interface PackLocationOptions extends ImportOptions {
  /** The outbound policy a URL is fetched under (the CLI may reach loopback; the daemon may not). */
  outbound: OutboundPolicy;
}

const MAX_REDIRECTS = 5;

/** Stops a download that sends more than `maxBytes`, whatever its Content-Length said. */
function byteCap(maxBytes: number): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      total += chunk.length;
      if (total > maxBytes) callback(new UserError(`The pack download is over ${maxBytes} bytes.`, { code: 'pack_too_large' }));
      else callback(null, chunk);
    },
  });
}

function isUrl(location: string): boolean {
  return /^https?:\/\//i.test(location);
}

/**
 * The pack's bytes from a URL, through the outbound policy, following redirects, capped at `maxBytes`. A CLI's
 * loopback permission covers the URL typed (its site) only: a redirect elsewhere is the server's word.
 */
async function download(url: string, policy: OutboundPolicy, maxBytes: number): Promise<Readable> {
  const typed = createOutboundAgent(policy, { timeout: 10_000 });
  const elsewhere = createOutboundAgent({ ...policy, allowLoopback: false }, { timeout: 10_000 });
  let current = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    let response;
    try {
      const dispatcher = onTypedSite(new URL(current), new URL(url)) ? typed : elsewhere;
      response = await request(current, { dispatcher, headersTimeout: 30_000, bodyTimeout: 60_000 });
    } catch (error) {
      if (isOutboundRefusal(error))
        throw new UserError(`Refused to download the pack: ${(error as Error).message}.`, { code: 'forbidden', hint: "A pack URL follows the crawler's outbound rules (CRAWL_ALLOW_HOSTS)." });
      throw new UserError(`Could not download the pack from ${current}: ${(error as Error).message}.`, { code: 'bad_gateway' });
    }
    const location = response.headers.location;
    if (response.statusCode >= 300 && response.statusCode < 400 && typeof location === 'string') {
      await response.body.dump();
      current = new URL(location, current).toString();
      if (!isUrl(current)) throw new UserError('The pack URL redirects to something that is not http(s).', { code: 'bad_gateway' });
      continue;
    }
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new UserError(`Downloading the pack answered HTTP ${response.statusCode}.`, { code: response.statusCode === 404 ? 'not_found' : 'bad_gateway' });
    }
    const length = Number(response.headers['content-length'] ?? NaN);
    if (length > maxBytes) {
      await response.body.dump();
      throw new UserError(`The pack is ${length} bytes, over the limit of ${maxBytes}.`, { code: 'pack_too_large' });
    }
    return response.body.pipe(byteCap(maxBytes));
  }
  throw new UserError('The pack URL redirects too many times.', { code: 'bad_gateway' });
}

async function openLocation(location: string, options: PackLocationOptions): Promise<Readable> {
  if (isUrl(location)) return download(location, options.outbound, options.maxBytes);
  const file = path.resolve(location);
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) throw new UserError(`${location} is not a file.`, { code: 'not_found', hint: 'Give a .docdex file from docdex export, or an http(s) URL.' });
  return createReadStream(file);
}

/** importPack from a file path or an http(s) URL (the download is capped: the compressed pack is at most maxBytes). */
export async function importPackFrom(pool: pg.Pool, location: string, options: PackLocationOptions): Promise<ImportSummary> {
  return importPack(pool, await openLocation(location, options), options);
}

/** exportPack into `file`, written beside it first and renamed when complete, so no half pack is ever left. */
export async function exportPackToFile(pool: pg.Pool, options: ExportOptions, file: string): Promise<ExportSummary> {
  const target = path.resolve(file);
  const partial = `${target}.partial-${process.pid}`;
  const output = createWriteStream(partial, { flags: 'wx' });
  try {
    const summary = await exportPack(pool, options, output);
    await rename(partial, target);
    return summary;
  } catch (error) {
    output.destroy();
    await rm(partial, { force: true });
    throw error;
  }
}

/** Each location imported in turn (`docdex import A B`); the first that fails stops the rest. */
export async function importPacksFrom(pool: pg.Pool, locations: readonly string[], options: PackLocationOptions): Promise<Array<ImportSummary & { location: string }>> {
  const results: Array<ImportSummary & { location: string }> = [];
  for (const location of locations) results.push({ location, ...(await importPackFrom(pool, location, options)) });
  return results;
}
