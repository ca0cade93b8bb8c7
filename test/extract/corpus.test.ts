import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Parser } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { detectLanguage, extractDocument } from '../../src/core/extract/index.js';
import type { ExtractResult } from '../../src/core/extract/index.js';
import { CANONICAL_LANGUAGES } from '../../src/core/extract/language-names.js';

/**
 * The extractor on four real documentation sites (Debian's python3.11-doc,
 * postgresql-doc-15, nodejs-doc and mkdocs-doc, unpacked by
 * ../shared/bin/fetch-doc-corpus). Every HTML page of every site is extracted;
 * the figures are printed for the report.
 */

const corpus = process.env.DOCDEX_CORPUS_DIR;
const SITES = ['python', 'postgres', 'node', 'mkdocs'] as const;
const present = corpus !== undefined && SITES.every((s) => existsSync(path.join(corpus, s)));
const reason = corpus ? `${corpus} lacks one of ${SITES.join(', ')}` : 'DOCDEX_CORPUS_DIR is not set';

if (!present) {
  if (process.env.DOCDEX_REQUIRE_CORPUS === '1') {
    describe('extraction on the real documentation corpus', () => {
      it('has the corpus (DOCDEX_REQUIRE_CORPUS=1)', () => {
        throw new Error(`The extraction corpus tests cannot run: ${reason}. Run ../shared/bin/fetch-doc-corpus.`);
      });
    });
  } else {
    console.log(`Skipping extraction corpus tests: ${reason}.`);
  }
}

function walk(dir: string, keep: (file: string) => boolean, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, keep, out);
    else if (keep(p)) out.push(p);
  }
  return out.sort();
}

const CODE_TAGS = new Set(['pre', 'programlisting', 'screen']);

/** Code elements counted by htmlparser2 alone, without any of the extractor's code. */
function countCodeElements(html: string): number {
  let n = 0;
  const p = new Parser({
    onopentagname(name) {
      if (CODE_TAGS.has(name)) n++;
    },
  });
  p.end(html);
  return n;
}

// A second parse of every page doubled the test's time; a tag regex agrees with
// htmlparser2 on every page of the corpus, so pages are counted with it and a
// sample is cross-checked against the parser.
function countCodeTags(html: string): number {
  return (html.match(/<(?:pre|programlisting|screen)[\s>]/gi) ?? []).length;
}

const COPY_LINE = /^\s*(?:copy|copied!?|copy code|copy to clipboard)\s*$/i;

/**
 * A gutter that leaked into the code: every line led by its number 1..n (three
 * lines or more: PostgreSQL shows real query output " 1\n 2").
 */
function hasGutter(code: string): boolean {
  const lines = code.split('\n');
  if (lines.length < 3) return false;
  return lines.every((l, i) => new RegExp(`^\\s*${i + 1}(?:\\s|$)`).test(l));
}

interface SiteStats {
  pages: number;
  codeElements: number;
  snippets: number;
  skipped: Record<string, number>;
  labelled: number;
  agreed: number;
  languages: Record<string, number>;
  problems: string[];
}

function newStats(): SiteStats {
  return { pages: 0, codeElements: 0, snippets: 0, skipped: {}, labelled: 0, agreed: 0, languages: {}, problems: [] };
}

function record(stats: SiteStats, file: string, r: ExtractResult, codeElements: number | null): void {
  stats.pages++;
  stats.snippets += r.snippets.length;
  if (r.error !== undefined) stats.problems.push(`${file}: extractor failed: ${r.error}`);
  for (const k of r.skipped ?? []) stats.skipped[k.reason] = (stats.skipped[k.reason] ?? 0) + 1;
  if (codeElements !== null) {
    stats.codeElements += codeElements;
    const fromCode = (r.origins ?? []).filter((o) => CODE_TAGS.has(o)).length;
    const skipped = (r.skipped ?? []).filter((k) => CODE_TAGS.has(k.tag)).length;
    if (fromCode + skipped !== codeElements) {
      stats.problems.push(`${file}: ${codeElements} code elements, ${fromCode} snippets + ${skipped} skipped`);
    }
  }
  for (const s of r.snippets) {
    stats.languages[s.language] = (stats.languages[s.language] ?? 0) + 1;
    const lines = s.code.split('\n');
    if (COPY_LINE.test(lines[0] ?? '') || COPY_LINE.test(lines[lines.length - 1] ?? '')) stats.problems.push(`${file}: copy-button text in ${JSON.stringify(s.code.slice(0, 60))}`);
    if (hasGutter(s.code)) stats.problems.push(`${file}: line-number gutter in ${JSON.stringify(s.code.slice(0, 60))}`);
    // Language accuracy: blocks whose markup names a language we classify.
    if (s.languageConfidence === 'declared' && s.language !== 'text' && CANONICAL_LANGUAGES.has(s.language)) {
      stats.labelled++;
      if (detectLanguage(s.code).language === s.language) stats.agreed++;
    }
  }
}

describe.skipIf(!present)('extraction on the real documentation corpus', () => {
  const root = corpus as string;
  const all: Record<string, SiteStats> = {};

  for (const site of SITES) {
    it(`${site}: every code element is a snippet or a named skip, no junk, no crash`, () => {
      const stats = newStats();
      for (const file of walk(path.join(root, site), (f) => f.endsWith('.html'))) {
        const body = readFileSync(file);
        const rel = path.relative(root, file);
        const r = extractDocument({ url: `https://${site}.docs.test/${path.relative(path.join(root, site), file)}`, contentType: 'text/html', body });
        const text = body.toString('utf8');
        const count = countCodeTags(text);
        if (stats.pages % 25 === 0) expect(countCodeElements(text), rel).toBe(count);
        record(stats, rel, r, count);
      }
      all[site] = stats;
      console.log(`${site}: ${JSON.stringify({ ...stats, problems: stats.problems.length })}`);
      expect(stats.problems.slice(0, 20)).toEqual([]);
      expect(stats.pages).toBeGreaterThan(10);
      expect(stats.snippets).toBeGreaterThan(100);
    });
  }

  it('node markdown sources (.md, .md.gz) extract without failures', () => {
    const stats = newStats();
    // micromark reads about 1 MB/s: every other file (in name order) keeps this test short.
    const files = walk(path.join(root, 'node'), (f) => f.endsWith('.md') || f.endsWith('.md.gz')).filter((_, i) => i % 2 === 0);
    for (const file of files) {
      const raw = readFileSync(file);
      const body = file.endsWith('.gz') ? gunzipSync(raw) : raw;
      const name = path.basename(file).replace(/\.gz$/, '');
      record(stats, path.relative(root, file), extractDocument({ url: `https://node.docs.test/src/${name}`, body }), null);
    }
    console.log(`node .md: ${JSON.stringify({ ...stats, problems: stats.problems.length })}`);
    expect(stats.problems.slice(0, 20)).toEqual([]);
    expect(stats.pages).toBeGreaterThan(25);
    expect(stats.snippets).toBeGreaterThan(500);
  });

  it('python reStructuredText sources (_sources/*.rst.txt) extract without failures', () => {
    const stats = newStats();
    for (const file of walk(path.join(root, 'python', '_sources'), (f) => f.endsWith('.rst.txt'))) {
      const url = `https://python.docs.test/${path.relative(path.join(root, 'python'), file)}`;
      const r = extractDocument({ url, contentType: 'text/plain', body: readFileSync(file) });
      if (r.page.format !== 'rst') stats.problems.push(`${file}: format ${r.page.format}`);
      record(stats, path.relative(root, file), r, null);
    }
    console.log(`python .rst.txt: ${JSON.stringify({ ...stats, problems: stats.problems.length })}`);
    expect(stats.problems.slice(0, 20)).toEqual([]);
    expect(stats.pages).toBeGreaterThan(400);
    expect(stats.snippets).toBeGreaterThan(3000);
  });

  it('the content classifier agrees with the class-declared language on at least 95% of blocks', () => {
    for (const site of SITES) expect(all[site], `${site} ran`).toBeDefined();
    let labelled = 0;
    let agreed = 0;
    for (const site of SITES) {
      const s = all[site] as SiteStats;
      labelled += s.labelled;
      agreed += s.agreed;
      console.log(`${site}: ${s.agreed}/${s.labelled} class-labelled blocks agree`);
    }
    const accuracy = agreed / labelled;
    console.log(`language accuracy: ${(accuracy * 100).toFixed(2)}% of ${labelled} blocks`);
    expect(labelled).toBeGreaterThan(5000);
    expect(accuracy).toBeGreaterThanOrEqual(0.95);
  });
});
