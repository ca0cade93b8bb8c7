import type { PgBoss } from 'pg-boss';
import { PAGE_QUEUE } from '../queue.js';

/**
 * Page queue jobs are completed in small batches: one round trip per page less. A job left active by a crash
 * before its batch went out is harmless; pg-boss expires it and the retry finds its page finished.
 */
export class PageCompletions {
  private ids: string[] = [];
  private timer: NodeJS.Timeout | null = null;
  private completing: Promise<void> = Promise.resolve();

  constructor(
    private readonly boss: PgBoss,
    private readonly onError: (error: Error) => void,
  ) {}

  add(id: string): void {
    this.ids.push(id);
    if (this.ids.length >= 25) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), 50);
  }

  /** Sends what is batched; resolves once every batch sent so far is done. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const ids = this.ids;
    this.ids = [];
    if (ids.length > 0) {
      this.completing = this.completing.then(() =>
        this.boss.complete(PAGE_QUEUE, ids).then(
          () => undefined,
          (error: unknown) => this.onError(error as Error),
        ),
      );
    }
    return this.completing;
  }
}
