import type { Doorbell } from '../doorbell.js';
import type { PageBatch } from './page-batch.js';
import type { PageRunner } from './page-runner.js';

interface PageLoopOptions {
  concurrency: number;
  /** Longest wait between looks at an empty queue. */
  idlePollMs: number;
  runner: PageRunner;
  batch: PageBatch;
  /** Rung when a page ends or pages are queued: look at once. */
  pageBell: Doorbell;
  stopping: AbortSignal;
  onError(error: Error): void;
}

/**
 * The page loop: whenever slots are free it fills them from the queue, right after a page ends or a wake-up,
 * and otherwise polls with a backoff that starts again at 25 ms as soon as it finds work. Ends when the worker
 * stops.
 */
export async function runPageLoop(options: PageLoopOptions): Promise<void> {
  const { concurrency, idlePollMs, runner, batch, pageBell, stopping, onError } = options;
  let idle = 25;
  while (!stopping.aborted) {
    const free = concurrency - runner.size;
    if (free <= 0) {
      await pageBell.wait(idlePollMs);
      continue;
    }
    let taken = 0;
    try {
      taken = await batch.fill(free);
    } catch (error) {
      if (stopping.aborted) break;
      onError(error as Error);
    }
    if (taken === free) {
      idle = 25;
      continue;
    }
    if (taken > 0) idle = 25;
    await pageBell.wait(idle);
    if (taken === 0) idle = Math.min(idle * 2, idlePollMs);
  }
}
