import type { JobEvent } from '../../core/events/notify.js';
import type { DashboardStats } from '../../core/stats/dashboard.js';
import type { JobProgressView } from '../job-view.js';

export type { DashboardStats, JobEvent, JobProgressView };

/** A row of the Sources screen. */
export interface SourceRow {
  id: string;
  name: string;
  version: string;
  snippets: number;
  pages: number;
  lastCrawledAt: string | null;
  /** The latest job's status ('running', 'failed', ...) or 'idle' when the source never ran a job. */
  state: string;
  kind: 'crawl' | 'upload' | 'git';
  baseUrl: string | null;
}

export interface SourceEdit {
  name: string;
  version: string;
  urlPatterns: string[];
}

export interface SnippetHit {
  id: number;
  /** 'section': a page section; its title is its breadcrumb and its code its markdown. */
  kind: 'snippet' | 'section';
  title: string;
  description: string;
  language: string;
  code: string;
  url: string;
  sourceName: string;
  sourceVersion: string;
  /** How many more matches its page has, folded under it (search results only). */
  more?: number;
}

export interface SearchHits {
  hits: SnippetHit[];
  /** Set when the source filter names no library exactly: the closest match, which was searched instead. */
  closest?: { requested: string; name: string; version: string };
}

export interface SearchRequest {
  query: string;
  source?: string;
  language?: string;
  limit: number;
}

export interface JobErrorRow {
  /** The page URL of a crawl, or the file path of an upload, that failed. */
  location: string;
  error: string;
}

/** What starting or resuming a job did; `warning` says why it may not move (no worker running). */
export interface JobStarted {
  jobId: string;
  warning: string | null;
}

export interface EventSubscription {
  close(): Promise<void>;
}

/**
 * Everything the dashboard reads or changes, as one port. The PostgreSQL adapter (`postgres.ts`) calls the
 * core functions; tests pass fixtures. Every method may reject: the UI shows the error and keeps running.
 */
export interface DashboardData {
  /** Where the data lives, safe to print (host:port/database). */
  readonly display: string;
  /** A cheap round trip, used to notice that a lost connection is back. */
  ping(): Promise<void>;
  stats(): Promise<DashboardStats>;
  sources(): Promise<SourceRow[]>;
  /** The editable fields of a source as stored now (the form starts from these). */
  sourceEdit(id: string): Promise<SourceEdit>;
  updateSource(id: string, edit: SourceEdit): Promise<void>;
  deleteSource(id: string): Promise<void>;
  /** Starts a new crawl of the source with its stored configuration. */
  recrawlSource(id: string): Promise<JobStarted>;
  sourceSnippets(id: string, options: { limit: number }): Promise<SnippetHit[]>;
  /** The `limit` most recent crawl and upload jobs plus every active one: active first, then newest first. */
  jobs(options: { limit: number }): Promise<JobProgressView[]>;
  /** The latest failed pages (crawl) or files (upload) of a job, newest first. */
  jobErrors(job: Pick<JobProgressView, 'id' | 'kind'>, options: { limit: number }): Promise<JobErrorRow[]>;
  /** Crawl jobs only: the dashboard points to `docdex jobs cancel|resume` for upload jobs. */
  cancelCrawl(id: string): Promise<void>;
  resumeCrawl(id: string): Promise<JobStarted>;
  search(request: SearchRequest): Promise<SearchHits>;
  subscribe(onEvent: (event: JobEvent) => void, onError: (error: Error) => void): Promise<EventSubscription>;
}
