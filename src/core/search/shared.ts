import type pg from 'pg';
import { searchSnippets } from './search.js';
import type { SearchOptions, SearchResponse } from './search.js';

/**
 * For servers: identical searches that arrive while one is running wait for its answer instead of running
 * again. Many assistants on one team ask a daemon the same question at once; each extra copy would cost a full
 * search and only lengthen the queue all of them wait in. A search that arrives after the running one finished
 * runs anew, so an answer is at most one search's duration older than the request. Answers are shared
 * objects: callers must not modify them.
 */

const running = new WeakMap<pg.Pool, Map<string, Promise<SearchResponse>>>();

// Searches this process is running, for background work that gives way to them (the daemon's crawl).
let searching = 0;
let lastSearchEnded = -Infinity;
// Under steady load the gaps between one search and the next are a few milliseconds; they still count as busy.
const QUIET_MS = 250;

/** True while a search runs in this process, or one ended in the last QUIET_MS. */
export function searchesBusy(): boolean {
  return searching > 0 || performance.now() - lastSearchEnded < QUIET_MS;
}

function searchKey(o: SearchOptions): string {
  return JSON.stringify([o.query, o.source ?? null, o.version ?? null, o.language ?? null, o.limit ?? null, o.offset ?? null]);
}

export function searchSnippetsShared(pool: pg.Pool, options: SearchOptions): Promise<SearchResponse> {
  let inFlight = running.get(pool);
  if (!inFlight) {
    inFlight = new Map();
    running.set(pool, inFlight);
  }
  const key = searchKey(options);
  const existing = inFlight.get(key);
  if (existing) return existing;
  const map = inFlight;
  searching++;
  const search = searchSnippets(pool, options).finally(() => {
    map.delete(key);
    searching--;
    lastSearchEnded = performance.now();
  });
  map.set(key, search);
  return search;
}
