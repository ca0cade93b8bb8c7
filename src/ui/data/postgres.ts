import type pg from 'pg';
import type { Config } from '../../core/config.js';
import type { ConnectionInfo } from '../../core/db/connect.js';
import { cancelCrawl, listCrawlJobs, liveWorkers, resumeCrawl } from '../../core/crawl/index.js';
import { subscribe } from '../../core/events/notify.js';
import { searchSnippets } from '../../core/search/search.js';
import { deleteSource, getSource, listSources, MAX_PAGE_SIZE, updateSource } from '../../core/sources/manage.js';
import { recrawlAnySource } from '../../core/crawl/recrawl.js';
import { listedSourceState } from '../../core/sources/indexed.js';
import { setUrlPatterns } from '../../core/sources/url-patterns.js';
import { dashboardStats } from '../../core/stats/dashboard.js';
import { crawlJobErrors, uploadJobErrors } from '../../core/stats/job-errors.js';
import { listSourceSnippets } from '../../core/store/snippets.js';
import { listUploadJobs } from '../../core/upload/job-rows.js';
import { fromCrawlJob, fromUploadJob, isActive } from '../job-view.js';
import { createAgentData } from './agent.js';
import type { AgentDataOptions } from './agent.js';
import type { DashboardData, JobProgressView, JobStarted, SnippetHit, SourceRow } from './types.js';

// A dashboard lists what fits on a screen many times over; past this the filter is the way to find a source.
const MAX_SOURCES = 2000;
const STATE_LOOKBACK_JOBS = 500;

// Active jobs show even when more than `limit` newer ones finished, up to this many of each kind.
const MAX_ACTIVE_JOBS = 100;

const NO_WORKER = 'No crawl worker is running, so it waits: start `docdex worker` or `docdex serve`.';

/** Every source (up to MAX_SOURCES) with its state: its active job's, else indexed, failed or empty. */
async function listSourceRows(pool: pg.Pool): Promise<SourceRow[]> {
  const rows: SourceRow[] = [];
  const [first, crawls, uploads] = await Promise.all([
    listSources(pool, { limit: MAX_PAGE_SIZE, offset: 0 }),
    listCrawlJobs(pool, { limit: STATE_LOOKBACK_JOBS }),
    listUploadJobs(pool, { limit: STATE_LOOKBACK_JOBS }),
  ]);
  // A source's newest job of either kind: while it runs it is the source's state; once it ended, what the
  // source holds decides (listedSourceState, the rule the CLI counts a library by).
  const jobs = [
    ...crawls.items.map((j) => ({ sourceId: j.source_id, at: Date.parse(j.created_at), status: j.status as string })),
    ...uploads.map((j) => ({ sourceId: j.source_id, at: Date.parse(j.created_at), status: j.status as string })),
  ].sort((a, b) => b.at - a.at);
  const latest = new Map<string, string>();
  for (const job of jobs) if (job.sourceId !== null && !latest.has(job.sourceId)) latest.set(job.sourceId, job.status);
  let page = first;
  for (;;) {
    for (const s of page.items) {
      rows.push({
        id: s.id,
        name: s.name,
        version: s.version,
        snippets: s.snippet_count,
        pages: s.page_count,
        lastCrawledAt: s.last_crawled_at ? new Date(s.last_crawled_at).toISOString() : null,
        state: listedSourceState({ document_count: s.page_count, newest_job_status: latest.get(s.id) ?? null }),
        kind: s.kind,
        baseUrl: s.base_url,
      });
    }
    const next = page.offset + page.items.length;
    if (page.items.length === 0 || next >= page.total || rows.length >= MAX_SOURCES) break;
    page = await listSources(pool, { limit: MAX_PAGE_SIZE, offset: next });
  }
  return rows;
}

/** The newest `limit` jobs of both kinds, and every active one (up to MAX_ACTIVE_JOBS of each), active first. */
async function listJobViews(pool: pg.Pool, limit: number): Promise<JobProgressView[]> {
  const [recentCrawls, activeCrawls, recentUploads, activeUploads] = await Promise.all([
    listCrawlJobs(pool, { limit }),
    listCrawlJobs(pool, { status: ['queued', 'running', 'enhancing'], limit: MAX_ACTIVE_JOBS }),
    listUploadJobs(pool, { limit }),
    listUploadJobs(pool, { status: ['queued', 'processing', 'enhancing'], limit: MAX_ACTIVE_JOBS }),
  ]);
  const newestFirst = (a: JobProgressView, b: JobProgressView) => (b.createdAt ?? '').localeCompare(a.createdAt ?? '');
  const recent = [...recentCrawls.items.map(fromCrawlJob), ...recentUploads.map((j) => fromUploadJob(j))].sort(newestFirst).slice(0, limit);
  const active = [...activeCrawls.items.map(fromCrawlJob), ...activeUploads.map((j) => fromUploadJob(j))];
  // A crawl and an upload never share an id (both are random UUIDs), so the id alone dedups.
  const byId = new Map<string, JobProgressView>();
  for (const job of [...active, ...recent]) if (!byId.has(job.id)) byId.set(job.id, job);
  return [...byId.values()].sort((a, b) => Number(isActive(b)) - Number(isActive(a)) || newestFirst(a, b));
}

/** A stored snippet or section as the dashboard lists it. */
function snippetHit(s: Pick<SnippetHit, 'id' | 'kind' | 'title' | 'description' | 'language' | 'code'> & { source_url: string; source_name: string; version: string }): SnippetHit {
  return { id: s.id, kind: s.kind, title: s.title, description: s.description, language: s.language, code: s.code, url: s.source_url, sourceName: s.source_name, sourceVersion: s.version };
}

/**
 * The dashboard's data port over PostgreSQL: every method is one core function (or a few), so the TUI shows
 * exactly what the CLI and the API return.
 */
export function createDashboardData(db: { pool: pg.Pool; info: ConnectionInfo }, config: Config, options: AgentDataOptions = {}): DashboardData {
  const { pool, info } = db;

  async function started(jobId: string): Promise<JobStarted> {
    const workers = await liveWorkers(pool).catch(() => null);
    return { jobId, warning: workers !== null && workers.length === 0 ? NO_WORKER : null };
  }

  return {
    display: info.display,
    async ping() {
      await pool.query('SELECT 1');
    },
    stats: () => dashboardStats(pool),
    sources: () => listSourceRows(pool),
    async sourceEdit(id) {
      const s = await getSource(pool, id);
      return { name: s.name, version: s.version, urlPatterns: s.crawl_config.url_patterns ?? [] };
    },
    async updateSource(id, edit) {
      // Name and version first: a clash with another source is refused before anything else changes.
      await updateSource(pool, id, { name: edit.name, version: edit.version });
      await setUrlPatterns(pool, id, edit.urlPatterns);
    },
    async deleteSource(id) {
      await deleteSource(pool, id);
    },
    async recrawlSource(id) {
      // The dashboard is the local user's, like the CLI: its crawls may reach loopback.
      const recrawl = await recrawlAnySource(db, config, id, { askedBy: 'user' });
      return started(recrawl.job.id);
    },
    async sourceSnippets(id, { limit }) {
      const page = await listSourceSnippets(pool, id, { limit, offset: 0 });
      return page.items.map(snippetHit);
    },
    jobs: ({ limit }) => listJobViews(pool, limit),
    async jobErrors(job, { limit }) {
      if (job.kind === 'upload') {
        const errors = await uploadJobErrors(pool, job.id, { limit });
        return errors.map((e) => ({ location: e.path, error: e.error }));
      }
      const errors = await crawlJobErrors(pool, job.id, { limit });
      return errors.map((e) => ({ location: e.url, error: e.error }));
    },
    async cancelCrawl(id) {
      await cancelCrawl(pool, id);
    },
    async resumeCrawl(id) {
      const job = await resumeCrawl(db, config, id, { askedBy: 'user' });
      return started(job.id);
    },
    async search({ query, source, language, limit }) {
      const result = await searchSnippets(pool, { query, limit, screening: config.screening, ...(source ? { source } : {}), ...(language ? { language } : {}) });
      const hits = result.items.map((r) => ({ ...snippetHit(r), ...(r.more ? { more: r.more.length } : {}) }));
      const library = result.library;
      return library && !library.exact ? { hits, closest: { requested: library.requested, name: library.name, version: library.version } } : { hits };
    },
    subscribe: (onEvent, onError) => subscribe(info, onEvent, { onError }),
    ...createAgentData(db, config, options),
  };
}
