import { z } from 'zod';
import { plural } from './common.js';
import { routesText } from '../../crawl/jobs.js';
import { llmProgressText } from '../../llm/progress-text.js';
import type { LlmProgressFields } from '../../llm/progress-text.js';

/** How the crawl tools describe a crawl job, in text for the model and as structured content. */

export interface CrawlJobView extends LlmProgressFields {
  id: string;
  llm_enhance?: boolean;
  name: string;
  status: string;
  version?: string;
  source_id?: string | null;
  start_urls?: string[];
  max_depth?: number;
  pages_found?: number;
  pages_crawled?: number;
  pages_skipped?: number;
  pages_failed?: number;
  snippets_stored?: number;
  max_pages?: number;
  page_cap_reached?: boolean;
  routes?: { html: number; markdown_twin: number; llms_full: number };
  pages_rendered?: number;
  render_hint?: string | null;
  current_url?: string | null;
  error?: string | null;
  created_at?: Date | string | null;
  started_at?: Date | string | null;
  completed_at?: Date | string | null;
}

export const jobIdArg = z
  .string()
  .trim()
  .min(4, 'job_id must be the id returned by init_crawl (a UUID, or at least its first 4 characters)')
  .max(36)
  .describe('The crawl job id returned by init_crawl (a unique prefix of at least 4 characters also works).');

// Absent rather than null when unknown: a nullable type (["string","null"]) is less portable across model
// providers' schema dialects (the MCP inspector's --strict check flags it).
export const crawlJobOutput = z.object({
  job_id: z.string(),
  name: z.string(),
  version: z.string(),
  status: z.string(),
  source_id: z.string().optional(),
  pages_found: z.number().int(),
  pages_crawled: z.number().int(),
  pages_skipped: z.number().int(),
  pages_failed: z.number().int(),
  snippets_stored: z.number().int(),
  max_pages: z.number().int().optional(),
  page_cap_reached: z.boolean().optional(),
  routes: z.object({ html: z.number().int(), markdown_twin: z.number().int(), llms_full: z.number().int() }).optional(),
  pages_rendered: z.number().int().optional(),
  render_hint: z.string().optional(),
  llm_pages_total: z.number().int().optional(),
  llm_pages_done: z.number().int().optional(),
  llm_pages_failed: z.number().int().optional(),
  llm_snippets_enhanced: z.number().int().optional(),
  current_url: z.string().optional(),
  error: z.string().optional(),
  created_at: z.string().optional(),
  started_at: z.string().optional(),
  completed_at: z.string().optional(),
});

function iso(value: Date | string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString();
}

function present<T extends Record<string, unknown>>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined && v !== null)) as T;
}

export function crawlJobStructured(job: CrawlJobView): z.output<typeof crawlJobOutput> {
  return present({
    job_id: job.id,
    name: job.name,
    version: job.version ?? '',
    status: job.status,
    source_id: job.source_id ?? undefined,
    pages_found: job.pages_found ?? 0,
    pages_crawled: job.pages_crawled ?? 0,
    pages_skipped: job.pages_skipped ?? 0,
    pages_failed: job.pages_failed ?? 0,
    snippets_stored: job.snippets_stored ?? 0,
    max_pages: job.max_pages,
    page_cap_reached: job.page_cap_reached,
    routes: job.routes,
    pages_rendered: job.pages_rendered,
    render_hint: job.render_hint ?? undefined,
    ...(job.llm_enhance ? { llm_pages_total: job.llm_pages_total, llm_pages_done: job.llm_pages_done, llm_pages_failed: job.llm_pages_failed, llm_snippets_enhanced: job.llm_snippets_enhanced } : {}),
    current_url: job.current_url ?? undefined,
    error: job.error ?? undefined,
    created_at: iso(job.created_at),
    started_at: iso(job.started_at),
    completed_at: iso(job.completed_at),
  });
}

function since(value: Date | string | null | undefined, now: number): string | undefined {
  if (value === null || value === undefined) return undefined;
  const seconds = Math.max(0, Math.round((now - new Date(value).getTime()) / 1000));
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

export function libraryRef(job: CrawlJobView): string {
  return job.version ? `${job.name}@${job.version}` : job.name;
}

/** The job's state and counters in a few lines, and what to do next. */
export function describeCrawlJob(job: CrawlJobView, now = Date.now()): string {
  const label = job.version ? `${job.name} ${job.version}` : job.name;
  const lines = [`Crawl job ${job.id} (${label}): ${job.status}.`];
  const crawled = job.pages_crawled ?? 0;
  lines.push(`Pages: ${crawled} crawled, ${job.pages_skipped ?? 0} skipped, ${job.pages_failed ?? 0} failed, ${job.pages_found ?? 0} found so far. ` + `Snippets stored: ${job.snippets_stored ?? 0}.`);
  const routes = routesText(job.routes);
  if (routes) lines.push(`Read from: ${routes}.`);
  if (job.pages_rendered) lines.push(`Rendered in headless Chromium: ${job.pages_rendered} ${plural(job.pages_rendered, 'page')}.`);
  if (job.render_hint) lines.push(job.render_hint);
  if (job.page_cap_reached) lines.push(`Stopped at its page cap (max_pages ${job.max_pages ?? '?'}): links found after that were not followed.`);
  if (job.current_url && (job.status === 'running' || job.status === 'queued')) lines.push(`Current page: ${job.current_url}`);
  const started = since(job.started_at, now);
  const finished = since(job.completed_at, now);
  if (finished) lines.push(`Finished ${finished} ago${started ? `, started ${started} ago` : ''}.`);
  else if (started) lines.push(`Started ${started} ago.`);
  else {
    const queued = since(job.created_at, now);
    if (queued) lines.push(`Queued ${queued} ago; waiting for a crawl worker.`);
  }
  if (job.error) lines.push(`Error: ${job.error}`);
  if (job.llm_enhance && job.llm_pages_total) lines.push(`LLM: ${llmProgressText(job)}.`);
  switch (job.status) {
    case 'queued':
    case 'running':
    case 'enhancing':
      lines.push(`Next: call get_crawl_status with job_id="${job.id}" again in a minute. Snippets already stored are searchable now: get_content with library_id="${libraryRef(job)}".`);
      break;
    case 'completed':
      lines.push(`Next: get_content with library_id="${libraryRef(job)}" and a query returns its snippets (${plural(job.snippets_stored ?? 0, 'snippet')} from this crawl).`);
      break;
    case 'cancelled':
    case 'failed':
      // A failed first crawl removes its empty source: there is nothing to search or resume.
      if (job.status === 'failed' && job.source_id === null) {
        lines.push('It stored no page, so no library was created. Check the URL (or the site), then call init_crawl again.');
        break;
      }
      lines.push(`Pages stored before it stopped stay searchable (get_content with library_id="${libraryRef(job)}"). It can be resumed from a terminal: docdex crawl resume ${job.id}.`);
      break;
  }
  return lines.join('\n');
}
