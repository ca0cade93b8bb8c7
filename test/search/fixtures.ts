import { createHash } from 'node:crypto';
import type pg from 'pg';
import { extractSections } from '../../src/core/extract/sections.js';
import type { ExtractedSnippet } from '../../src/core/extract/types.js';
import { indexUpkeepStage } from '../../src/core/pipeline/index-upkeep.js';
import { runPostCommitStages } from '../../src/core/pipeline/stages.js';
import { storePage } from '../../src/core/store/pages.js';
import type { PageWrite } from '../../src/core/store/pages.js';

/**
 * Small hand-written fixtures stored through the real page store and the index-upkeep stage, the way the
 * crawler stores pages (without queueing LLM work).
 */

export interface FixtureSnippet {
  title: string;
  code: string;
  description?: string;
  language?: string;
  anchor?: string;
}

export interface FixtureSource {
  id: string;
  jobId: string;
}

export async function createSource(pool: pg.Pool, name: string, version = ''): Promise<FixtureSource> {
  const { rows } = await pool.query<{ id: string }>(`INSERT INTO sources (name, version, base_url, crawl_config) VALUES ($1, $2, $3, $4) RETURNING id`, [
    name,
    version,
    `https://${name.toLowerCase().replace(/[^a-z0-9]+/g, '')}.example/`,
    JSON.stringify({ start_urls: [`https://${name.toLowerCase().replace(/[^a-z0-9]+/g, '')}.example/`], max_depth: 1 }),
  ]);
  const id = rows[0]!.id;
  const job = await pool.query<{ id: string }>(`INSERT INTO crawl_jobs (source_id, name, status, start_urls) VALUES ($1, $2, 'completed', $3) RETURNING id`, [id, name, [`https://${name}.example/`]]);
  return { id, jobId: job.rows[0]!.id };
}

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

export function snippet(s: FixtureSnippet, url: string, position: number): ExtractedSnippet {
  return {
    title: s.title,
    description: s.description ?? '',
    language: s.language ?? 'python',
    code: s.code,
    filename: null,
    codeHash: md5(s.code),
    position,
    sourceUrl: s.anchor ? `${url}#${s.anchor}` : url,
    languageConfidence: 'declared',
    tab: null,
    section: '',
  };
}

export async function addPage(
  pool: pg.Pool,
  source: FixtureSource,
  url: string,
  snippets: FixtureSnippet[],
  /** sections: the page's sections cut from its markdown and stored too, as extraction does. */
  options: { title?: string; markdown?: string; sections?: boolean } = {},
): Promise<Awaited<ReturnType<typeof storePage>>> {
  const markdown = options.markdown ?? snippets.map((s) => `## ${s.title}\n\n${s.description ?? ''}\n\n\`\`\`\n${s.code}\n\`\`\``).join('\n\n');
  const title = options.title ?? snippets[0]?.title ?? url;
  const extracted = snippets.map((s, i) => snippet(s, url, i));
  const write: PageWrite = {
    sourceId: source.id,
    url,
    title,
    markdown,
    contentHash: md5(markdown),
    job: { kind: 'crawl', id: source.jobId },
    snippets: extracted,
    ...(options.sections ? { sections: extractSections({ url, title, markdown }, extracted) } : {}),
  };
  const stored = await storePage(pool, write);
  await runPostCommitStages(
    [indexUpkeepStage],
    { job: write.job, sourceId: source.id, title: write.title, stored },
    {
      pool,
      onError: (e) => {
        throw e;
      },
    },
  );
  return stored;
}
