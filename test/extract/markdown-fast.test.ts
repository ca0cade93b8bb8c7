import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractDocument } from '../../src/core/extract/index.js';
import { scanBlocks } from '../../src/core/extract/markdown-blocks.js';
import { markdownChunks } from '../../src/core/extract/markdown-chunks.js';
import { extractMarkdown } from '../../src/core/extract/markdown.js';
import type { ExtractResult } from '../../src/core/extract/types.js';
import { referenceMarkdown } from './markdown-reference.js';

/**
 * The markdown extractor's fast path (markdown-blocks.ts, markdown-inline.ts) against the
 * reference, every chunk parsed by micromark (./markdown-reference.ts): the same snippets on
 * Node's markdown sources and on generated documents.
 */

const corpus = process.env.DOCDEX_CORPUS_DIR;
const nodeDir = corpus === undefined ? null : path.join(corpus, 'node');
const present = nodeDir !== null && existsSync(nodeDir);
const reason = corpus ? `${corpus} has no node/ folder` : 'DOCDEX_CORPUS_DIR is not set';

/** What a snippet is, field by field (its anchor is in its source URL). */
function snippetFields(r: ExtractResult): Array<Record<string, string>> {
  return r.snippets.map((s) => ({ title: s.title, language: s.language, code: s.code, description: s.description, sourceUrl: s.sourceUrl }));
}

function fast(text: string, url: string): ExtractResult {
  return extractMarkdown(text, url, 'hash', 'markdown', false);
}

function nodeMarkdownFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.md') || f.endsWith('.md.gz'))
    .sort()
    .map((f) => path.join(dir, f));
}

function readMarkdown(file: string): string {
  const raw = readFileSync(file);
  return (file.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
}

if (!present) {
  if (process.env.DOCDEX_REQUIRE_CORPUS === '1') {
    describe('markdown fast path on the Node.js markdown sources', () => {
      it('has the corpus (DOCDEX_REQUIRE_CORPUS=1)', () => {
        throw new Error(`The markdown corpus comparison cannot run: ${reason}. Run ../shared/bin/fetch-doc-corpus.`);
      });
    });
  } else {
    console.log(`Skipping the markdown corpus comparison: ${reason}.`);
  }
}

function corpusSuite(dir: string): void {
  const files = nodeMarkdownFiles(dir);

  it('gives the same snippets as micromark, file by file', () => {
    expect(files.length).toBeGreaterThan(50);
    let snippets = 0;
    for (const file of files) {
      const url = `https://node.docs.test/src/${path.basename(file).replace(/\.gz$/, '')}`;
      const text = readMarkdown(file);
      const got = snippetFields(fast(text, url));
      expect(got, path.basename(file)).toEqual(snippetFields(referenceMarkdown(text, url)));
      snippets += got.length;
    }
    expect(snippets).toBeGreaterThan(1000);
  }, 300_000);

  it('reads the blocks of all but a handful of chunks without micromark', () => {
    let chunks = 0;
    let refused = 0;
    for (const file of files) {
      for (const chunk of markdownChunks(readMarkdown(file))) {
        chunks++;
        try {
          scanBlocks(chunk, () => undefined);
        } catch {
          refused++;
        }
      }
    }
    expect(chunks).toBeGreaterThan(300);
    // The one refused: a footnote definition (`[^1]: ...`), which only micromark reads.
    expect(refused).toBeLessThanOrEqual(2);
  });
}

if (nodeDir !== null && present) describe('markdown fast path on the Node.js markdown sources', () => corpusSuite(nodeDir));

const word = fc.constantFrom('foo', 'Bar', 'node_modules', 'x1', 'this', 'The', 'example', 'é', '値', 'a.b', 'ref');
const inline = fc.constantFrom(
  '`code`',
  '``a`b``',
  '` x `',
  '*em*',
  '**strong**',
  '_u_',
  '__x__',
  '***a***',
  '*a **b** c*',
  '[link](http://a.b/c "t")',
  '[link](</a b>)',
  '[ref][]',
  '[ref]',
  '[x][ref]',
  '[x][nope]',
  '<http://x.y/z>',
  '<a@b.co>',
  '<span class="a">',
  '</span>',
  'a\\*b',
  '\\',
  '&amp;',
  '&#65;',
  '~~s~~',
  '![i](x)',
  'www.x.com',
  'http://a.b/c_d',
  '*',
  '_',
  '**',
  '[',
  ']',
  '(',
  ')',
  '<',
  '`',
  '  ',
  '{#custom-id}',
);
const lineText = fc.array(fc.oneof(word, inline), { minLength: 1, maxLength: 6 }).map((a) => a.join(' '));
const prefix = fc.constantFrom('', '', '', '  ', '   ', '    ', '> ', '>', '- ', '* ', '+ ', '1. ', '2) ', '  - ', '    - ', '> - ', '- > ', '# ', '## ', '### ', '10. ');
const blockLine = fc.constantFrom(
  '',
  '',
  '```js',
  '```',
  '~~~',
  '````',
  '```python title="a.py"',
  '---',
  '===',
  '***',
  '- - -',
  '| a | b |',
  '|---|---|',
  '| 1 | 2 |',
  '[ref]: http://x.y/ref',
  '[Ref]: <http://x.y> "title"',
  '<div>',
  '</div>',
  '<!-- c -->',
  '<!--',
  '-->',
  '<pre>',
  '</pre>',
  '<TabItem label="L">',
  '</TabItem>',
  '!!! note',
  '=== "Tab"',
  '-',
  '1.',
  '#',
);
const mdLine = fc.oneof(
  fc.tuple(prefix, lineText).map(([p, t]) => p + t),
  fc.tuple(prefix, blockLine).map(([p, b]) => p + b),
);
const mdDocument = fc.array(mdLine, { minLength: 1, maxLength: 30 }).map((lines) => lines.join('\n'));

describe('markdown fast path on generated documents', () => {
  it('gives the same snippets as micromark', () => {
    fc.assert(
      fc.property(mdDocument, (text) => {
        const url = 'https://docs.example.test/page.md';
        expect(snippetFields(fast(text, url))).toEqual(snippetFields(referenceMarkdown(text, url)));
      }),
      { numRuns: 2000, seed: 33 },
    );
  }, 180_000);

  it('never throws on arbitrary text, and reads it the same way twice', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 400 }), fc.string({ unit: 'binary', maxLength: 400 }), mdDocument), (text) => {
        const first = extractDocument({ url: 'https://docs.example.test/any.md', contentType: 'text/markdown', body: text });
        expect(first.error).toBeUndefined();
        const again = extractDocument({ url: 'https://docs.example.test/any.md', contentType: 'text/markdown', body: text });
        expect(again).toEqual(first);
      }),
      { numRuns: 2000, seed: 3333 },
    );
  }, 180_000);
});

/** A seeded generator of one-line JSON, about `bytes` long: keys, URLs, marks and brackets markdown reads. */
function oneLineJson(bytes: number, seed: number): string {
  let state = seed >>> 0;
  const next = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const words = ['id', '_id', 'user_name', 'http://example.com/a_b?x=1&y=2', 'www.example.org/*', 'a*b', '[x]', '~t~', '&amp;', '<tag>', '__proto__', '**b**', 'see [l](http://x.y)'];
  const pick = (): string => JSON.stringify(words[Math.floor(next() * words.length)]);
  const value = (depth: number): string => {
    const k = next();
    if (depth > 4 || k < 0.4) return k < 0.2 ? String(Math.floor(next() * 1e6)) : pick();
    const n = 1 + Math.floor(next() * 6);
    if (k < 0.7) return `[${Array.from({ length: n }, () => value(depth + 1)).join(',')}]`;
    return `{${Array.from({ length: n }, () => `${pick()}:${value(depth + 1)}`).join(',')}}`;
  };
  const parts: string[] = [];
  let size = 2;
  while (size < bytes) {
    const v = value(0);
    parts.push(v);
    size += v.length + 1;
  }
  return `[${parts.join(',')}]`;
}

describe('markdown on a long line of JSON', () => {
  it('reads 475 KB of one-line JSON served as markdown in well under the extraction budget', () => {
    const body = oneLineJson(475_000, 33);
    expect(body.length).toBeGreaterThan(475_000);
    expect(body).not.toContain('\n');
    const started = process.cpuUsage();
    const r = extractDocument({ url: 'https://api.example.test/data', contentType: 'text/markdown', body });
    const used = process.cpuUsage(started);
    expect(r.error).toBeUndefined();
    expect(r.page.markdown.length).toBe(body.length);
    // Linear reading takes a fraction of a second; micromark took over a minute of CPU on such a line.
    expect((used.user + used.system) / 1000).toBeLessThan(5_000);
  }, 60_000);
});
