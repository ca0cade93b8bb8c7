import { sleep } from './sleep.js';

/**
 * A crawl that shares its process with searches (`docdex serve`) gives way to them, as PostgreSQL's autovacuum
 * gives way to queries with its cost delay. While someone waits on a search, each page slot rests four times as
 * long as the page's extraction and storage took before it takes the next page, so the crawl keeps about a fifth
 * of the machine it would otherwise take, and runs at full speed again once the searches stop. The trade is
 * fewer pages crawled for a lower search p99 while both run (the daemon load bench's crawl rows).
 * The rest counts only the work after the fetch: a page that spent a second waiting for its host's politeness
 * slot cost the machine nothing and is not made to wait again.
 */
const REST_PER_WORK = 4;
const MAX_REST_MS = 1000;

/** True while the process serves requests someone is waiting for. */
export type ForegroundBusy = () => boolean;

export async function giveWay(busy: ForegroundBusy | undefined, workMs: number, signal: AbortSignal): Promise<void> {
  if (!busy?.()) return;
  // A cancel or stop ends the rest at once; the page itself is already stored.
  await sleep(Math.min(MAX_REST_MS, workMs * REST_PER_WORK), signal).catch(() => undefined);
}
