import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { UserError } from '../errors.js';

/**
 * Rows streamed into PostgreSQL through `COPY ... FROM STDIN` in its text format: one line a row, fields
 * separated by tabs, `\N` for NULL. Inside a field a backslash, tab, newline and carriage return are written
 * as backslash escapes; every other character goes through as it is (the connection's encoding is UTF-8).
 * PostgreSQL text cannot hold a NUL character at all, so a value with one is refused (the pack's row schema
 * already refuses it; this is the last guard before the wire).
 */

export type CopyValue = string | number | boolean | null;

const SPECIAL = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

export function copyField(value: CopyValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new UserError(`A pack value is not a finite number: ${value}.`, { code: 'pack_invalid' });
    return String(value);
  }
  if (value.includes('\0')) throw new UserError('A pack value holds a NUL character, which PostgreSQL text cannot store.', { code: 'pack_invalid' });
  return value.replace(SPECIAL, (c) => ESCAPES[c]!);
}

export function copyLine(values: readonly CopyValue[]): string {
  return `${values.map(copyField).join('\t')}\n`;
}

const CHUNK_CHARS = 256 * 1024;

/** Lines joined into larger chunks: one stream write per line would cost more than the escaping. */
async function* chunked(lines: AsyncIterable<string>): AsyncGenerator<string> {
  let buffer = '';
  for await (const line of lines) {
    buffer += line;
    if (buffer.length >= CHUNK_CHARS) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer.length > 0) yield buffer;
}

/**
 * Streams `lines` (each from copyLine) into `statement` (a `COPY ... FROM STDIN`) on `client`. A failure on
 * either side (a row the generator refuses, a row PostgreSQL refuses) rejects, and the COPY is aborted; the
 * caller's transaction is then failed and must roll back.
 */
export async function copyLines(client: pg.ClientBase, statement: string, lines: AsyncIterable<string>): Promise<void> {
  const sink = client.query(copyFrom(statement));
  await pipeline(Readable.from(chunked(lines), { objectMode: false }), sink);
}
