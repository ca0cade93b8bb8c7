/**
 * The NOTIFY channel crawl workers LISTEN on: a new job's id (adopt it) or PAGES_QUEUED (fetch from the page
 * queue now). Apart from queue.ts so that starting, cancelling or reading a crawl (jobs.ts) can ring it without
 * loading pg-boss, which only the side that puts pages on the queue needs.
 */
export const WAKE_CHANNEL = 'docdex_crawl_wake';
export const PAGES_QUEUED = 'pages';
