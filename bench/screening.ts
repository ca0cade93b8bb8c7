// Screening at index time (issue 36): the injected corpus of test/fixtures/screening (goal: all 30 flagged,
// no benign look-alike flagged) and the false-positive rate on every HTML page of the real Python, PostgreSQL
// and Node docs (goal: at most 0.5% of snippets flagged), with the time screening adds to extraction.
//
//   npm run build && node --experimental-strip-types bench/screening.ts
//
// The corpus is $DOCDEX_CORPUS_DIR (default ~/.cache/docdex-corpus), see ../shared/bin/fetch-doc-corpus.
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { extractDocument } from '../dist/core/extract/index.js';
import { screenText } from '../dist/core/extract/screening.js';
import { BENIGN, INJECTED } from '../test/fixtures/screening/cases.ts';
import { SCREENED_SITES, screenSite, screeningCorpusMissing } from './harness/screening-corpus.ts';

type Row = Record<string, string | number>;

function injectedRow(): Row {
  let flagged = 0;
  for (const c of INJECTED) {
    if (c.kind === 'text') {
      if (screenText(c.body).flags.length > 0) flagged++;
      continue;
    }
    const body = c.kind === 'code' ? `<html><body><main><h1>Example</h1><pre><code>${c.body.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</code></pre></main></body></html>` : c.body;
    const url = c.kind === 'markdown' ? 'https://docs.example.test/README.md' : 'https://docs.example.test/guide.html';
    const r = extractDocument({ url, contentType: c.kind === 'markdown' ? 'text/markdown' : 'text/html', body });
    if (r.snippets.length > 0 && r.snippets.every((s: { flags?: string[] }) => (s.flags ?? []).length > 0)) flagged++;
  }
  const benignFlagged = BENIGN.filter((s) => screenText(s).flags.length > 0).length;
  return {
    corpus: 'injected (test/fixtures/screening)',
    pages: INJECTED.length,
    snippets: '-',
    flagged: `${flagged}/${INJECTED.length}`,
    'flagged %': `${((100 * flagged) / INJECTED.length).toFixed(1)}%`,
    goal: '100%',
    'benign flagged': `${benignFlagged}/${BENIGN.length}`,
  };
}

/** The screening share of extraction time: each page's markdown and snippets screened again, timed apart. */
function siteRow(root: string, site: string): Row {
  let screeningMs = 0;
  const started = performance.now();
  const r = screenSite(root, site, (input) => {
    const out = extractDocument(input);
    const t = performance.now();
    screenText(out.page.markdown);
    for (const s of out.snippets) screenText(`${s.code}\n${s.title}\n${s.description}`);
    screeningMs += performance.now() - t;
    return out;
  });
  const totalMs = performance.now() - started - screeningMs;
  return {
    corpus: site,
    pages: r.pages,
    snippets: r.snippets,
    flagged: r.flagged,
    'flagged %': `${((100 * r.flagged) / Math.max(1, r.snippets)).toFixed(3)}%`,
    goal: '<= 0.5%',
    'flagged pages': r.flaggedPages,
    'screening ms': Math.round(screeningMs),
    'extract ms': Math.round(totalMs),
  };
}

export async function benchScreening(): Promise<Row[]> {
  const root = process.env.DOCDEX_CORPUS_DIR ?? path.join(os.homedir(), '.cache', 'docdex-corpus');
  const rows: Row[] = [injectedRow()];
  const missing = screeningCorpusMissing(root);
  if (missing !== null) return [...rows, { corpus: 'real docs', result: `skipped: ${missing}` }];
  for (const site of SCREENED_SITES) rows.push(siteRow(root, site));
  return rows;
}

// Run alone (bench/run.ts runs every bench when imported, so its table printer is not borrowed).
if (import.meta.url === `file://${process.argv[1]}`) {
  console.log('## screening (issue 36)');
  console.table(await benchScreening());
}
