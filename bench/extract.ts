// Extraction throughput on the real documentation corpus, next to bare htmlparser2
// tokenising of the same bytes in the same process (issue 3: goal >= 0.5 of bare), and
// markdown extraction next to bare mdast-util-from-markdown (GFM and front matter, as the
// extractor used it) on Node's .md sources (issue 33: goal >= 5 MB/s).
//
//   npm run build && node --experimental-strip-types bench/extract.ts
//
// Single core, in this thread. Times are CPU time (process.cpuUsage), best of
// ROUNDS, so other processes on a shared machine disturb them less than wall time
// would. "bare" decodes the bytes and tokenises them with a callback-less Parser:
// both sides start from the same Buffer. The corpus is
// $DOCDEX_CORPUS_DIR (default ~/.cache/docdex-corpus), see ../shared/bin/fetch-doc-corpus.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Parser } from 'htmlparser2';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { frontmatter } from 'micromark-extension-frontmatter';
import { gfm } from 'micromark-extension-gfm';
import { extractDocument } from '../dist/core/extract/index.js';

type Row = Record<string, string | number>;

const ROUNDS = 2;
const SITES = ['python', 'postgres', 'node', 'mkdocs'];

interface Doc {
  url: string;
  body: Buffer;
}

function walk(dir: string, keep: (f: string) => boolean, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, keep, out);
    else if (keep(p)) out.push(p);
  }
  return out.sort();
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Best CPU time of ROUNDS runs of `fn` over all docs. */
function best(docs: Doc[], fn: (d: Doc) => void): number {
  let min = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const t = cpuMs();
    for (const d of docs) fn(d);
    min = Math.min(min, cpuMs() - t);
  }
  return min;
}

const mbps = (bytes: number, ms: number): number => Number((bytes / 1e6 / (ms / 1000)).toFixed(1));

const MARKDOWN_OPTIONS = {
  extensions: [gfm(), frontmatter(['yaml', 'toml'])],
  mdastExtensions: [gfmFromMarkdown(), frontmatterFromMarkdown(['yaml', 'toml'])],
};

/** Markdown extraction beside bare fromMarkdown on the same files (both decode the same Buffer). */
function markdownRow(md: Doc[]): Row {
  const bytes = md.reduce((n, d) => n + d.body.length, 0);
  const extract = (d: Doc): void => {
    extractDocument({ url: d.url, contentType: 'text/plain', body: d.body });
  };
  const bare = (d: Doc): void => {
    fromMarkdown(d.body.toString('utf8'), MARKDOWN_OPTIONS);
  };
  for (const d of md) extract(d);
  const bareMs = best(md, bare);
  const extractMs = best(md, extract);
  return {
    corpus: 'node .md (markdown)',
    pages: md.length,
    MB: Number((bytes / 1e6).toFixed(1)),
    'bare fromMarkdown MB/s': mbps(bytes, bareMs),
    'extraction MB/s': mbps(bytes, extractMs),
    'extraction / bare': Number((bareMs / extractMs).toFixed(2)),
    goal: '>= 5 MB/s',
  };
}

export async function benchExtract(): Promise<Row[]> {
  const dir = process.env.DOCDEX_CORPUS_DIR ?? path.join(os.homedir(), '.cache', 'docdex-corpus');
  if (!SITES.every((s) => existsSync(path.join(dir, s)))) {
    return [{ result: `corpus missing at ${dir}: run ../shared/bin/fetch-doc-corpus and set DOCDEX_CORPUS_DIR` }];
  }
  const rows: Row[] = [];
  const allHtml: Doc[] = [];
  const sites: Array<[string, Doc[]]> = [];
  for (const site of SITES) {
    const docs = walk(path.join(dir, site), (f) => f.endsWith('.html')).map((f) => ({
      url: `https://${site}.docs.test/${path.relative(path.join(dir, site), f)}`,
      body: readFileSync(f),
    }));
    sites.push([site, docs]);
    allHtml.push(...docs);
  }

  const bare = (d: Doc): void => {
    new Parser({}).end(d.body.toString('utf8'));
  };
  let snippets = 0;
  let counting = true;
  const extract = (d: Doc): void => {
    const r = extractDocument({ url: d.url, contentType: 'text/html', body: d.body });
    if (counting) snippets += r.snippets.length;
  };
  // Warm both paths up (JIT) before measuring; count snippets on the way.
  for (const d of allHtml) {
    bare(d);
    extract(d);
  }
  counting = false;

  let totalBytes = 0;
  let totalBare = 0;
  let totalExtract = 0;
  for (const [site, docs] of sites) {
    const bytes = docs.reduce((n, d) => n + d.body.length, 0);
    const bareMs = best(docs, bare);
    const extractMs = best(docs, extract);
    totalBytes += bytes;
    totalBare += bareMs;
    totalExtract += extractMs;
    rows.push({
      corpus: site,
      pages: docs.length,
      MB: Number((bytes / 1e6).toFixed(1)),
      'bare htmlparser2 MB/s': mbps(bytes, bareMs),
      'extraction MB/s': mbps(bytes, extractMs),
      'extraction / bare': Number((bareMs / extractMs).toFixed(2)),
    });
  }
  rows.push({
    corpus: 'all HTML',
    pages: allHtml.length,
    MB: Number((totalBytes / 1e6).toFixed(1)),
    'bare htmlparser2 MB/s': mbps(totalBytes, totalBare),
    'extraction MB/s': mbps(totalBytes, totalExtract),
    'extraction / bare': Number((totalBare / totalExtract).toFixed(2)),
    goal: '>= 0.5',
    snippets,
  });

  // Text formats: markdown beside bare fromMarkdown; rst for reference (no bare counterpart).
  const md: Doc[] = walk(path.join(dir, 'node'), (f) => f.endsWith('.md') || f.endsWith('.md.gz')).map((f) => ({
    url: `https://node.docs.test/${path.basename(f).replace(/\.gz$/, '')}`,
    body: f.endsWith('.gz') ? gunzipSync(readFileSync(f)) : readFileSync(f),
  }));
  const rst: Doc[] = walk(path.join(dir, 'python', '_sources'), (f) => f.endsWith('.rst.txt')).map((f) => ({
    url: `https://python.docs.test/_sources/${path.basename(f)}`,
    body: readFileSync(f),
  }));
  rows.push(markdownRow(md));
  const bytes = rst.reduce((n, d) => n + d.body.length, 0);
  const ms = best(rst, (d) => {
    extractDocument({ url: d.url, contentType: 'text/plain', body: d.body });
  });
  rows.push({ corpus: 'python .rst.txt (rst)', pages: rst.length, MB: Number((bytes / 1e6).toFixed(1)), 'extraction MB/s': mbps(bytes, ms) });
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await benchExtract();
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  console.log(cols.join('\t'));
  for (const r of rows) console.log(cols.map((c) => String(r[c] ?? '')).join('\t'));
}
