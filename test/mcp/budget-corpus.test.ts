import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from '../../src/core/mcp/tokens.js';
import { TestSite } from '../crawl/helpers/site.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { connectMcpClient } from '../helpers/mcp.js';
import { crawlSite, resultText } from './helpers.js';

/**
 * Focused page reads (#36) on real documentation: Python's library/os.html from the corpus, crawled from a
 * static server on 127.0.0.1 and read through the official SDK client with get_page_markdown and a query.
 */
const corpus = process.env.DOCDEX_CORPUS_DIR;
const PYTHON = corpus ? path.join(corpus, 'python') : '';
const present = Boolean(corpus) && existsSync(path.join(PYTHON, 'library', 'os.html'));
const reason = corpus ? `the corpus at ${corpus} lacks python/library/os.html` : 'DOCDEX_CORPUS_DIR is not set';

if (!present) {
  if (process.env.DOCDEX_REQUIRE_CORPUS === '1') {
    describe('real documentation corpus', () => {
      it('is present (DOCDEX_REQUIRE_CORPUS=1)', () => {
        throw new Error(`Real-corpus focused-read tests cannot run: ${reason}. Run ../shared/bin/fetch-doc-corpus.`);
      });
    });
  } else {
    console.log(`Skipping real-corpus focused-read tests: ${reason}.`);
  }
}

interface Focused {
  sections: Array<{ heading: string; cut: boolean }>;
  left_out: string[];
  total_sections: number;
  tokens: number;
}

describe.skipIf(!present)('get_page_markdown with a query on Python library/os.html', () => {
  let db: TestDatabase;
  let python: TestSite;
  let client: Client;
  let url: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    python = await TestSite.start();
    python.staticRoot = PYTHON;
    url = python.url('/library/os.html');
    await crawlSite(db, { name: 'python', start_urls: [url], max_depth: 0 });
    client = await connectMcpClient(db);
  });

  afterAll(async () => {
    await client?.close();
    await python?.close();
    await db?.drop();
  });

  async function read(query: string, maxTokens: number): Promise<{ text: string; s: Focused }> {
    const result = (await client.callTool({ name: 'get_page_markdown', arguments: { url, query, max_tokens: maxTokens } })) as CallToolResult;
    const text = resultText(result);
    expect(result.isError, text).toBeFalsy();
    const s = result.structuredContent as unknown as Focused;
    console.log(`os.html "${query}" at max_tokens=${maxTokens}: ${countTokens(text)} tokens, ${s.sections.length} sections shown of ${s.total_sections}, ${s.left_out.length} left out`);
    return { text, s };
  }

  it('returns the section of the function asked for, first, within the budget', async () => {
    const { text, s } = await read('makedirs exist_ok', 1500);
    expect(countTokens(text)).toBeLessThanOrEqual(1500);
    expect(s.total_sections).toBeGreaterThan(200);
    expect(s.sections[0]!.heading).toMatch(/Files and Directories › os\.makedirs\(name, mode=0o777, exist_ok=False\)$/);
    expect(text).toContain('Recursive directory creation function.');
    // Not the page's start: the focused read skips the hundreds of sections that do not match.
    expect(text).not.toContain('Python UTF-8 Mode');
  });

  it('names the matching sections it leaves out, by heading', async () => {
    const { text, s } = await read('environment variables', 2000);
    expect(countTokens(text)).toBeLessThanOrEqual(2000);
    expect(s.sections.length).toBeGreaterThan(0);
    expect(s.sections.map((x) => x.heading).join('\n')).toContain('Environment Variables');
    expect(s.left_out.length).toBeGreaterThan(0);
    expect(text).toContain(`Left out to stay within max_tokens=2000: ${s.left_out.length} matching section`);
    expect(text).toContain(JSON.stringify(s.left_out[0]));
    expect(s.left_out.join('\n')).toMatch(/os\.getenv\(key, default=None\)|os\.environ/);
  });

  it('stays within the budget at 500, 2,000 and 10,000 tokens', async () => {
    for (const maxTokens of [500, 2000, 10_000]) {
      const { text } = await read('file permissions chmod', maxTokens);
      expect(countTokens(text)).toBeLessThanOrEqual(maxTokens);
    }
  });
});
