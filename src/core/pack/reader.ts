import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createZstdDecompress } from 'node:zlib';
import tar from 'tar-stream';
import type { Header } from 'tar-stream';
import { UserError, isUserError } from '../errors.js';
import { ContentDigest } from './digest.js';
import { LineSplitter } from './lines.js';
import { MAX_JSON_ENTRY_BYTES, MAX_LINE_BYTES, PART_NAMES, documentRowSchema, snippetRowSchema, sourceSchema } from './format.js';
import type { ManifestLibrary, PackManifest, PackSource, PartName } from './format.js';
import { parseManifest } from './manifest.js';
import { parseRow } from './rows.js';

/**
 * Reading a pack (docs/pack-format.md) into a private temporary folder, checking everything before the
 * database sees any of it: the manifest (format, version, limits), every entry's name, order, size and
 * SHA-256, every row through its schema, each part's line count and each library's content digest against
 * the manifest. Any failure is a UserError (pack_invalid, pack_version_unsupported, pack_too_large); the
 * caller removes the folder.
 */

type TarEntry = AsyncIterable<Buffer> & { header: Header };

export interface VerifiedLibrary {
  entry: ManifestLibrary;
  source: PackSource;
  files: Record<Exclude<PartName, 'source.json'>, string>;
}

export interface VerifiedPack {
  manifest: PackManifest;
  libraries: VerifiedLibrary[];
}

function invalid(message: string): UserError {
  return new UserError(message, { code: 'pack_invalid' });
}

/** The input decompressed as its magic bytes say (zstd or gzip), with the decompressed size capped. */
async function decompressed(input: Readable, maxBytes: number): Promise<{ extract: tar.Extract; done: Promise<void> }> {
  const iterator = (input as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  let head = Buffer.alloc(0);
  while (head.length < 4) {
    const next = await iterator.next();
    if (next.done) break;
    head = Buffer.concat([head, Buffer.from(next.value)]);
  }
  const zstd = head.length >= 4 && head.readUInt32LE(0) === 0xfd2fb528;
  const gzip = head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
  if (!zstd && !gzip) throw invalid('This is not a docdex pack: it is neither zstd nor gzip compressed.');
  const rest = Readable.from(
    (async function* () {
      yield head;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield Buffer.from(next.value);
    })(),
  );
  let total = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      total += chunk.length;
      if (total > maxBytes) callback(new UserError(`The pack unpacks to more than ${maxBytes} bytes.`, { code: 'pack_too_large' }));
      else callback(null, chunk);
    },
  });
  const extract = tar.extract();
  const done = pipeline(rest, zstd ? createZstdDecompress() : createGunzip(), cap, extract);
  return { extract, done };
}

async function readSmallEntry(entry: AsyncIterable<Buffer>, name: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of entry) {
    bytes += chunk.length;
    if (bytes > MAX_JSON_ENTRY_BYTES) throw invalid(`${name} is over ${MAX_JSON_ENTRY_BYTES} bytes.`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Streams one part to `file`, hashing it and handing its bytes to `onChunk`; checks size and SHA-256. */
async function receivePart(entry: AsyncIterable<Buffer>, name: string, expected: { bytes: number; sha256: string }, file: string, onChunk: (chunk: Buffer) => void): Promise<void> {
  const hash = createHash('sha256');
  const out = createWriteStream(file, { flags: 'wx', mode: 0o600 });
  let bytes = 0;
  let rowError: unknown;
  try {
    for await (const chunk of entry) {
      bytes += chunk.length;
      if (bytes > expected.bytes) throw invalid(`${name} is longer than the manifest says.`);
      hash.update(chunk);
      // A bad row is reported after the hash: a damaged part says so, rather than naming the row it broke.
      if (rowError === undefined) {
        try {
          onChunk(chunk);
        } catch (error) {
          rowError = error;
        }
      }
      if (!out.write(chunk)) await once(out, 'drain');
    }
  } finally {
    out.end();
    await once(out, 'close');
  }
  if (bytes !== expected.bytes) throw invalid(`${name} is shorter than the manifest says.`);
  if (hash.digest('hex') !== expected.sha256) throw invalid(`${name} does not match its SHA-256 in the manifest: the pack was altered or damaged.`);
  if (rowError !== undefined) throw rowError;
}

class LibraryCheck {
  documents = 0;
  snippets = 0;
  readonly digest = new ContentDigest();
  source: PackSource | undefined;
}

interface ExpectedEntry {
  name: string;
  library: number;
  part: PartName;
}

function expectedEntries(manifest: PackManifest): ExpectedEntry[] {
  return manifest.libraries.flatMap((library, index) => PART_NAMES.map((part) => ({ name: `${library.folder}/${part}`, library: index, part })));
}

function partFile(dir: string, library: number, part: PartName): string {
  return path.join(dir, `${library}-${part}`);
}

/** Each complete line of a part through its row schema, counted and added to the library's digest. */
function rowChecker(want: ExpectedEntry, check: LibraryCheck): { onChunk: (chunk: Buffer) => void; finish: () => void } {
  const splitter = new LineSplitter(MAX_LINE_BYTES, want.name);
  let line = 0;
  const onRow =
    want.part === 'documents.ndjson'
      ? (text: string) => {
          const row = parseRow(documentRowSchema, text, want.name, ++line);
          check.documents += 1;
          check.digest.addDocument(row.url, row.contentHash);
        }
      : (text: string) => {
          const row = parseRow(snippetRowSchema, text, want.name, ++line);
          check.snippets += 1;
          check.digest.addSnippet(row.codeHash, row.title, row.description, row.language);
        };
  return { onChunk: (chunk) => splitter.push(chunk).forEach(onRow), finish: () => splitter.end() };
}

async function receiveEntry(entry: AsyncIterable<Buffer>, want: ExpectedEntry, library: ManifestLibrary, dir: string, check: LibraryCheck): Promise<void> {
  const expected = library.parts[want.part];
  if (want.part === 'source.json') {
    const bytes = await readSmallEntry(entry, want.name);
    if (bytes.length !== expected.bytes || createHash('sha256').update(bytes).digest('hex') !== expected.sha256) {
      throw invalid(`${want.name} does not match its SHA-256 in the manifest: the pack was altered or damaged.`);
    }
    check.source = parseRow(sourceSchema, bytes.toString('utf8'), want.name, 1);
    if (check.source.name !== library.name || check.source.version !== library.version) throw invalid(`${want.name} names another library than the manifest.`);
    return;
  }
  const rows = rowChecker(want, check);
  await receivePart(entry, want.name, expected, partFile(dir, want.library, want.part), rows.onChunk);
  rows.finish();
}

function verifiedLibraries(manifest: PackManifest, checks: LibraryCheck[], dir: string): VerifiedLibrary[] {
  return manifest.libraries.map((entry, index) => {
    const check = checks[index]!;
    const where = entry.folder;
    if (check.documents !== entry.documents) throw invalid(`${where}/documents.ndjson has ${check.documents} rows; the manifest says ${entry.documents}.`);
    if (check.snippets !== entry.snippets) throw invalid(`${where}/snippets.ndjson has ${check.snippets} rows; the manifest says ${entry.snippets}.`);
    if (check.digest.hex() !== entry.digest) throw invalid(`${where}'s content digest does not match the manifest.`);
    return {
      entry,
      source: check.source!,
      files: { 'documents.ndjson': partFile(dir, index, 'documents.ndjson'), 'snippets.ndjson': partFile(dir, index, 'snippets.ndjson') },
    };
  });
}

async function readEntries(extract: AsyncIterable<TarEntry>, dir: string, maxBytes: number): Promise<VerifiedPack> {
  let manifest: PackManifest | undefined;
  let expected: ExpectedEntry[] = [];
  let checks: LibraryCheck[] = [];
  let index = 0;
  for await (const entry of extract) {
    const { name, type } = entry.header;
    if (!manifest) {
      if (name !== 'manifest.json' || type !== 'file') throw invalid('This is not a docdex pack: it does not start with manifest.json.');
      manifest = parseManifest(await readSmallEntry(entry, 'manifest.json'), maxBytes);
      expected = expectedEntries(manifest);
      checks = manifest.libraries.map(() => new LibraryCheck());
      continue;
    }
    const want = expected[index++];
    if (!want || type !== 'file' || name !== want.name) {
      throw invalid(`The pack has ${JSON.stringify(name.slice(0, 200))} where ${want ? want.name : 'its end'} was expected.`);
    }
    await receiveEntry(entry, want, manifest.libraries[want.library]!, dir, checks[want.library]!);
  }
  if (!manifest) throw invalid('The pack is empty.');
  if (index < expected.length) throw invalid(`The pack ends before ${expected[index]!.name}: it is truncated.`);
  return { manifest, libraries: verifiedLibraries(manifest, checks, dir) };
}

function packError(error: unknown): UserError {
  if (isUserError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return invalid(`The pack is truncated or corrupt (${message.slice(0, 200)}).`);
}

/**
 * Reads and verifies a pack from `input` into `dir` (an empty, private folder the caller made and removes).
 * Resolves only when every entry, hash, row, count and digest is right; throws a UserError otherwise.
 */
export async function readPack(input: Readable, dir: string, options: { maxBytes: number }): Promise<VerifiedPack> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let stream: tar.Extract | undefined;
  let done: Promise<unknown> = Promise.resolve();
  try {
    const opened = await decompressed(input, options.maxBytes);
    stream = opened.extract;
    done = opened.done.then(
      () => undefined,
      (error: unknown) => error,
    );
    const pack = await readEntries(stream as AsyncIterable<TarEntry>, dir, options.maxBytes);
    const failure = await done;
    if (failure) throw failure;
    return pack;
  } catch (error) {
    stream?.destroy();
    input.destroy();
    const pipelineFailure = await done;
    throw packError(isUserError(pipelineFailure) ? pipelineFailure : error);
  }
}
