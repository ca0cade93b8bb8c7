import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { ExtractedSnippet, LanguageConfidence } from '../../src/core/extract/types.js';
import { recordLanguageConfidence } from '../../src/core/llm/language-confidence.js';
import { storePage } from '../../src/core/store/pages.js';
import type { PageWriteResult } from '../../src/core/store/pages.js';

/** Source, job and page rows for the LLM tests, written through the real page store. */

export async function createCrawlJob(pool: pg.Pool, name = `src-${Math.random().toString(36).slice(2, 10)}`): Promise<{ sourceId: string; jobId: string }> {
  const source = await pool.query<{ id: string }>('INSERT INTO sources (name) VALUES ($1) RETURNING id', [name]);
  const sourceId = source.rows[0]!.id;
  const job = await pool.query<{ id: string }>(`INSERT INTO crawl_jobs (source_id, name, status, start_urls) VALUES ($1, $2, 'running', ARRAY['https://docs.example.test/']) RETURNING id`, [
    sourceId,
    name,
  ]);
  return { sourceId, jobId: job.rows[0]!.id };
}

export function snippet(position: number, code: string, over: Partial<ExtractedSnippet> & { languageConfidence?: LanguageConfidence } = {}): ExtractedSnippet {
  return {
    title: 'Example',
    description: '',
    language: 'python',
    code,
    filename: null,
    codeHash: createHash('md5').update(code).digest('hex'),
    position,
    sourceUrl: 'https://docs.example.test/page',
    languageConfidence: 'declared',
    ...over,
  };
}

export interface TestPage {
  url: string;
  title: string;
  markdown: string;
  snippets: ExtractedSnippet[];
}

/** Stores a page with the language-confidence rows the llm-enhancement stage writes with it; queues nothing. */
export async function storeTestPage(pool: pg.Pool, ids: { sourceId: string; jobId: string }, page: TestPage): Promise<PageWriteResult> {
  return storePage(
    pool,
    {
      sourceId: ids.sourceId,
      url: page.url,
      title: page.title,
      markdown: page.markdown,
      contentHash: createHash('md5').update(page.markdown).digest('hex'),
      job: { kind: 'crawl', id: ids.jobId },
      snippets: page.snippets,
    },
    [recordLanguageConfidence],
  );
}

/** A widget-factory page: a definition, its use (no language, titled like the page) and an install command. */
export function widgetPage(url = 'https://docs.example.test/widgets', variant = ''): TestPage {
  // A variant changes every block's code (and so its hash): a page the LLM cache has not seen.
  const tag = variant ? `  # ${variant}` : '';
  const define = `def make_widget(name):\n    return Widget(name)${tag}`;
  const use = `widget = make_widget("gear")\nwidget.spin()${tag}`;
  const install = `pip install widgets${tag}`;
  return {
    url,
    title: 'Widget Guide',
    markdown: `# Widget Guide\n\nWidgets turn gears.\n\nDefine a factory:\n\n\`\`\`python\n${define}\n\`\`\`\n\nThen use it:\n\n\`\`\`\n${use}\n\`\`\`\n\n## Installing widgets\n\n\`\`\`\n${install}\n\`\`\`\n`,
    snippets: [
      snippet(0, define, { title: 'Example', description: 'Define a factory:' }),
      snippet(1, use, { title: 'Widget Guide', description: 'Then use it:', language: 'text', languageConfidence: 'unknown' }),
      snippet(2, install, { title: 'Installing widgets', description: 'Install the package.', language: 'shell', languageConfidence: 'detected' }),
    ],
  };
}

export interface SnippetState {
  id: number;
  title: string;
  description: string;
  language: string;
  language_confidence: string | null;
  llm_enhanced: boolean;
}

export async function snippetStates(pool: pg.Pool, ids: number[]): Promise<SnippetState[]> {
  const { rows } = await pool.query<SnippetState>('SELECT id, title, description, language, language_confidence, llm_enhanced FROM snippets WHERE id = ANY($1::bigint[])', [ids]);
  return ids.map((id) => rows.find((r) => r.id === id)!);
}

/** Ids of the given snippets whose search vector matches a plain query. */
export async function searchIds(pool: pg.Pool, query: string, ids: number[]): Promise<number[]> {
  const { rows } = await pool.query<{ id: number }>(`SELECT id FROM snippets WHERE id = ANY($2::bigint[]) AND search_vector @@ plainto_tsquery('english', $1) ORDER BY id`, [query, ids]);
  return rows.map((r) => r.id);
}

export async function jobUsage(pool: pg.Pool, jobId: string): Promise<{ llm_calls: number; llm_tokens: number }> {
  const { rows } = await pool.query<{ llm_calls: number; llm_tokens: number }>('SELECT llm_calls, llm_tokens FROM crawl_jobs WHERE id = $1', [jobId]);
  return rows[0]!;
}
