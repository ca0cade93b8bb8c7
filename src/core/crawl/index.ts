/**
 * The crawler's public API, used by the CLI (`crawl ...`, `worker`), the daemon (REST, MCP init_crawl,
 * `serve` workers) and `sources recrawl`.
 */
export { startCrawl, getCrawlJob, listCrawlJobs, cancelCrawl, resumeCrawl, crawlHealth, resolveCrawlJobId, liveWorkers, TERMINAL_STATUSES, STALL_SECONDS } from './jobs.js';
export type { CrawlJob, CrawlJobStatus, CrawlHealth, StalledJob, LiveWorker, ListCrawlJobsOptions, StartCrawlOptions } from './jobs.js';
export { startCrawlWorkers } from './worker.js';
export type { CrawlWorkers, CrawlWorkerOptions, WorkerEvent } from './worker.js';
export type { ForegroundBusy } from './courtesy.js';
export { waitForJob } from './progress.js';
export type { WaitOptions } from './progress.js';
export { parseCrawlRequest, crawlRequestSchema, splitList, DEFAULT_CONCURRENCY, MAX_CONCURRENCY, MAX_DEPTH } from './request.js';
export type { CrawlRequest, CrawlRequestInput } from './request.js';
export { USER_AGENT, DEFAULT_FETCH_SETTINGS } from './fetch.js';
export type { FetchSettings } from './fetch.js';
