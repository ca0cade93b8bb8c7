// Screening's false positives on real documentation: every HTML page of Python's, PostgreSQL's and Node's
// docs (Debian's python3.11-doc, postgresql-doc-15, nodejs-doc under $DOCDEX_CORPUS_DIR) extracted with the
// real extractor, and every snippet it yields counted flagged or not. None of these pages addresses an
// AI assistant, so every flag is a false positive unless its passage says otherwise. The extractor comes from
// the caller: dist/ in bench/screening.ts, src/ in test/extract/screening-corpus.test.ts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const SCREENED_SITES = ['python', 'postgres', 'node'] as const;

interface Snippet {
  title: string;
  flags?: string[];
  flaggedPassage?: string;
}
type Extract = (input: { url: string; contentType: string; body: Uint8Array }) => { snippets: Snippet[] };

export interface FlaggedSnippet {
  page: string;
  title: string;
  passage: string;
}

export interface SiteScreening {
  site: string;
  pages: number;
  snippets: number;
  flagged: number;
  flaggedPages: number;
  examples: FlaggedSnippet[];
}

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (p.endsWith('.html')) out.push(p);
  }
  return out.sort();
}

/** Why the corpus cannot be screened, or null when every site is there. */
export function screeningCorpusMissing(root: string | undefined): string | null {
  if (root === undefined || root === '') return 'DOCDEX_CORPUS_DIR is not set';
  const missing = SCREENED_SITES.filter((s) => !existsSync(path.join(root, s)));
  return missing.length > 0 ? `${root} lacks ${missing.join(', ')}` : null;
}

/** Screens one site: pages, snippets, flagged snippets and the pages they sit on. */
export function screenSite(root: string, site: string, extract: Extract): SiteScreening {
  const out: SiteScreening = { site, pages: 0, snippets: 0, flagged: 0, flaggedPages: 0, examples: [] };
  const dir = path.join(root, site);
  for (const file of walk(dir)) {
    const rel = path.relative(dir, file);
    const r = extract({ url: `https://${site}.docs.test/${rel}`, contentType: 'text/html', body: readFileSync(file) });
    out.pages++;
    out.snippets += r.snippets.length;
    const flagged = r.snippets.filter((s) => (s.flags ?? []).length > 0);
    if (flagged.length === 0) continue;
    out.flagged += flagged.length;
    out.flaggedPages++;
    for (const s of flagged.slice(0, 3)) out.examples.push({ page: rel, title: s.title, passage: s.flaggedPassage ?? '' });
  }
  return out;
}
