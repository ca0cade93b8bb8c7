import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractDocument } from '../../src/core/extract/index.js';
import type { ExtractResult, ExtractedSnippet } from '../../src/core/extract/index.js';

export const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'extract');

export const BASE = 'https://docs.example.test/';

/** Extract a fixture file as if it were served at BASE + its name. */
export function extractFixture(name: string, contentType?: string): ExtractResult {
  return extractDocument({ url: BASE + name, contentType: contentType ?? null, body: readFileSync(path.join(FIXTURES, name)) });
}

/** The snippet whose code contains `needle`; fails the test when there is none. */
export function snippetWith(result: ExtractResult, needle: string): ExtractedSnippet {
  const found = result.snippets.find((s) => s.code.includes(needle));
  if (found === undefined) {
    throw new Error(`no snippet contains ${JSON.stringify(needle)}; got ${JSON.stringify(result.snippets.map((s) => s.code.slice(0, 40)))}`);
  }
  return found;
}
