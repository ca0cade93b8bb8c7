import { createReadStream } from 'node:fs';
import type { z } from 'zod';
import { MAX_LINE_BYTES } from './format.js';
import { LineSplitter } from './lines.js';
import { parseRow } from './rows.js';

/** A verified part read back in batches of rows, each through its schema again (cheap, and no trust in the disk). */
export async function* readRowBatches<S extends z.ZodType>(file: string, schema: S, where: string, batchSize: number): AsyncGenerator<Array<z.output<S>>> {
  const splitter = new LineSplitter(MAX_LINE_BYTES, where);
  let batch: Array<z.output<S>> = [];
  let line = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    for (const text of splitter.push(chunk)) {
      batch.push(parseRow(schema, text, where, ++line));
      if (batch.length >= batchSize) {
        yield batch;
        batch = [];
      }
    }
  }
  splitter.end();
  if (batch.length > 0) yield batch;
}
