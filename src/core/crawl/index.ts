/**
 * The crawler's public API, used by the CLI (`crawl ...`, `worker`), the daemon (REST, MCP init_crawl,
 * `serve` workers) and `sources recrawl`.
 */
export { startCrawl, getCrawlJob, listCrawlJobs, cancelCrawl, resumeCrawl, crawlHealth, liveWorkers } from './jobs.js';
export type { CrawlJob } from './jobs.js';
export { startCrawlWorkers } from './worker.js';
export type { CrawlWorkers, CrawlWorkerOptions } from './worker.js';
export { waitForJob } from './progress.js';
export { parseCrawlRequest } from '../crawl-request.js';
export type { CrawlRequestInput } from '../crawl-request.js';
