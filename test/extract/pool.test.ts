import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { extractDocument } from '../../src/core/extract/index.js';
import { createExtractionPool, ExtractionError } from '../../src/core/extract-pool/pool.js';
import type { ExtractionPool } from '../../src/core/extract-pool/pool.js';
import { BASE, FIXTURES } from './helpers.js';

const pools: ExtractionPool[] = [];
function pool(threads: number, timeoutMs: number): ExtractionPool {
  const p = createExtractionPool({ threads, timeoutMs });
  pools.push(p);
  return p;
}

afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

/** Plain prose and code, `bytes` long: each KB costs the extractor the same. */
function bigMarkdown(bytes: number): string {
  const unit = '## Part\n\nSome prose about the `thing` here.\n\n```js\nconst thing = 1;\n```\n\n';
  return unit.repeat(Math.ceil(bytes / unit.length));
}

describe('extraction pool', () => {
  it('extracts every fixture exactly as the extractor does in this thread', async () => {
    const p = pool(2, 120_000);
    const names = readdirSync(FIXTURES);
    const inputs = names.map((name) => ({ url: BASE + name, contentType: null, body: readFileSync(path.join(FIXTURES, name)) }));
    const pooled = await Promise.all(inputs.map((input) => p.extract(input)));
    inputs.forEach((input, i) => expect(pooled[i], names[i]).toEqual(extractDocument(input)));
  }, 300_000);

  it('fails a document over its time budget with the reason, and extracts the next one on a new thread', async () => {
    const p = pool(1, 300);
    await p.extract({ url: 'https://docs.example.test/warm.md', body: '# warm' });
    await expect(p.extract({ url: 'https://docs.example.test/big.md', body: bigMarkdown(8_000_000) })).rejects.toThrow(new ExtractionError('extraction took longer than 0.3 s'));
    const next = await p.extract({ url: 'https://docs.example.test/small.md', body: '# Small\n\n```js\nsmall();\n```\n' });
    expect(next.snippets.map((s) => s.code)).toEqual(['small();']);
  }, 300_000);

  it('refuses documents once closed', async () => {
    const p = pool(1, 60_000);
    await p.close();
    await expect(p.extract({ url: 'https://docs.example.test/a.md', body: '# a' })).rejects.toThrow(ExtractionError);
  });
});
