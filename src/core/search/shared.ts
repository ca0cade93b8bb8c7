import type pg from 'pg';
import { UserError } from '../errors.js';
import { searchSnippets } from './search.js';
import type { SearchOptions, SearchResponse } from './search.js';

/**
 * For servers: identical searches that arrive while one is running (or waiting to run) wait for its answer
 * instead of running again. Many assistants on one team ask a daemon the same question at once; each extra copy
 * would cost a full search and only lengthen the queue all of them wait in. A search that arrives after the
 * running one finished runs anew, so an answer is at most one search's duration older than the request.
 * Answers are shared objects: callers must not modify them.
 *
 * A pool may also cap how many searches run at once (limitSearches). PostgreSQL runs every backend it is given
 * at the same time, so twenty searches on two cores each take ten times as long and every one of them finishes
 * late; taken a few at a time, in arrival order, most finish early and none later than before. With fewer
 * backends contending for the cores, more searches also finish a second, and the crawl running beside them
 * gets more of the machine (the daemon load bench's '9,900 varied, at random' row).
 */

/** The caller stopped waiting (its client went away). A search it alone waited for and not yet started is not run. */
export class SearchCancelledError extends UserError {
  constructor() {
    super('The search was cancelled: its caller stopped waiting.', { code: 'cancelled' });
  }
}

/** One search and its callers: running, or waiting in its pool's queue. */
interface Shared {
  answer: Promise<SearchResponse>;
  /** Callers still waiting; when the last one leaves before the search starts, it is not run at all. */
  waiters: number;
  started: boolean;
  /** Refused (cancelled or turned away) before it started: skipped when its turn comes. */
  dropped: boolean;
  start(): void;
  /** Fails the waiting search's callers with `error` instead of running it; no-op once started. */
  refuse(error: Error): void;
}

interface PoolSearches {
  running: Map<string, Shared>;
  limit: number;
  active: number;
  queue: Shared[];
}

const pools = new WeakMap<pg.Pool, PoolSearches>();

function poolSearches(pool: pg.Pool): PoolSearches {
  let p = pools.get(pool);
  if (!p) {
    p = { running: new Map(), limit: Infinity, active: 0, queue: [] };
    pools.set(pool, p);
  }
  return p;
}

/** At most `concurrency` shared searches of this pool run at once; the others wait their turn in order. */
export function limitSearches(pool: pg.Pool, concurrency: number): void {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`search concurrency must be a whole number of at least 1, got ${concurrency}`);
  poolSearches(pool).limit = concurrency;
}

// Searches this process is running, for background work that gives way to them (the daemon's crawl).
let searching = 0;
let lastSearchEnded = -Infinity;
// Under steady load the gaps between one search and the next are a few milliseconds; they still count as busy.
const QUIET_MS = 250;

/** True while a search runs or waits in this process, or one ended in the last QUIET_MS. */
export function searchesBusy(): boolean {
  return searching > 0 || performance.now() - lastSearchEnded < QUIET_MS;
}

function searchKey(o: SearchOptions): string {
  const sourceIds = o.sourceIds === undefined ? null : [...o.sourceIds].map((id) => id.toLowerCase()).sort();
  return JSON.stringify([o.query, o.source ?? null, o.version ?? null, sourceIds, o.language ?? null, o.limit ?? null, o.offset ?? null, o.screening ?? null]);
}

function release(p: PoolSearches): void {
  p.active--;
  for (let next = p.queue.shift(); next; next = p.queue.shift()) {
    if (next.dropped) continue;
    p.active++;
    next.start();
    return;
  }
}

function startShared(pool: pg.Pool, p: PoolSearches, key: string, options: SearchOptions): Shared {
  let resolveAnswer!: (answer: SearchResponse) => void;
  let rejectAnswer!: (error: Error) => void;
  const answer = new Promise<SearchResponse>((resolve, reject) => {
    resolveAnswer = resolve;
    rejectAnswer = reject;
  });
  // A search dropped before anyone else waited for it rejects with nobody listening: not an unhandled rejection.
  answer.catch(() => undefined);
  // Ended (answered, failed or dropped): later callers start a search of their own. Before the callers
  // waiting for this one hear of it, so that none of them can join it again.
  const ended = () => {
    if (p.running.get(key) === shared) p.running.delete(key);
    searching--;
    lastSearchEnded = performance.now();
  };
  const shared: Shared = {
    answer,
    waiters: 0,
    started: false,
    dropped: false,
    refuse(error) {
      if (shared.started || shared.dropped) return;
      shared.dropped = true;
      ended();
      rejectAnswer(error);
    },
    start() {
      shared.started = true;
      searchSnippets(pool, options)
        .finally(() => {
          ended();
          release(p);
        })
        .then(resolveAnswer, rejectAnswer);
    },
  };
  searching++;
  if (p.active < p.limit) {
    p.active++;
    shared.start();
  } else {
    p.queue.push(shared);
  }
  return shared;
}

/**
 * Fails every search of this pool still waiting for its turn with `error`; the running ones finish. For a
 * server about to close the pool: a search started on a closed pool fails with the driver's own message.
 */
export function refuseWaitingSearches(pool: pg.Pool, error: Error): void {
  for (const waiting of pools.get(pool)?.queue.splice(0) ?? []) waiting.refuse(error);
}

/**
 * The search, shared with identical ones in flight. `signal` is the caller's interest: when it aborts before the
 * search has started, the caller's promise rejects with SearchCancelledError, and the search is dropped from the
 * queue if no other caller still waits for it. Once started, a search runs to its end (its answer is shared).
 */
export function searchSnippetsShared(pool: pg.Pool, options: SearchOptions, signal?: AbortSignal): Promise<SearchResponse> {
  const p = poolSearches(pool);
  const key = searchKey(options);
  let shared = p.running.get(key);
  if (!shared) {
    shared = startShared(pool, p, key, options);
    p.running.set(key, shared);
  }
  if (shared.started) return shared.answer;
  if (!signal) {
    // Waits for as long as the search takes: the search is never dropped from under this caller.
    shared.waiters++;
    return shared.answer;
  }
  if (signal.aborted) {
    if (shared.waiters === 0) shared.refuse(new SearchCancelledError());
    return Promise.reject(new SearchCancelledError());
  }
  const s = shared;
  s.waiters++;
  return new Promise<SearchResponse>((resolve, reject) => {
    const onAbort = () => {
      s.waiters--;
      if (s.waiters === 0) s.refuse(new SearchCancelledError());
      reject(new SearchCancelledError());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    s.answer.then(
      (answer) => {
        signal.removeEventListener('abort', onAbort);
        resolve(answer);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}
