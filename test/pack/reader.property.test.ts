import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isUserError } from '../../src/core/errors.js';
import { readPack } from '../../src/core/pack/reader.js';

const CODES = new Set(['pack_invalid', 'pack_version_unsupported', 'pack_too_large']);

async function outcome(bytes: Uint8Array): Promise<unknown> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-pack-prop-'));
  try {
    await readPack(Readable.from([Buffer.from(bytes)]), path.join(dir, 'x'), { maxBytes: 1024 * 1024 });
    return undefined;
  } catch (error) {
    return error;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('pack reader on hostile bytes', () => {
  it('answers arbitrary bytes, raw, zstd- or gzip-compressed, with a clear pack error, never a crash', async () => {
    const bytes = fc.uint8Array({ maxLength: 4096 });
    const wrapped = fc.oneof(
      bytes,
      bytes.map((b) => new Uint8Array(zstdCompressSync(b))),
      bytes.map((b) => new Uint8Array(gzipSync(b))),
      // Something that looks like a tar with a manifest first, with arbitrary contents.
      fc.string({ maxLength: 600 }).map((json) => {
        const header = Buffer.alloc(512);
        header.write('manifest.json');
        header.write('0000644\0', 100);
        header.write(`${Buffer.byteLength(json).toString(8).padStart(11, '0')}\0`, 124);
        header.write('0', 156);
        header.write('ustar\u000000', 257);
        header.fill(' ', 148, 156);
        let sum = 0;
        for (const b of header) sum += b;
        header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
        const body = Buffer.alloc(Math.ceil(Buffer.byteLength(json) / 512) * 512);
        body.write(json);
        return new Uint8Array(zstdCompressSync(Buffer.concat([header, body, Buffer.alloc(1024)])));
      }),
    );
    await fc.assert(
      fc.asyncProperty(wrapped, async (input) => {
        const error = await outcome(input);
        expect(isUserError(error), String(error)).toBe(true);
        expect(CODES.has((error as { code: string }).code)).toBe(true);
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});
