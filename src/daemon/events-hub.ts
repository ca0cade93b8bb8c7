import type { ConnectionInfo } from '../core/db/connect.js';
import { subscribe } from '../core/events/notify.js';
import type { JobEvent, Subscription } from '../core/events/notify.js';

/**
 * One LISTEN connection for the whole daemon, fanned out to WebSocket clients. Reconnects with backoff when
 * the database connection drops, so followers resume without restarting the daemon.
 */
export class EventsHub {
  private listeners = new Set<(event: JobEvent) => void>();
  private subscription: Subscription | undefined;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly info: ConnectionInfo,
    private readonly log: { warn: (obj: object, msg: string) => void },
  ) {}

  async start(): Promise<void> {
    await this.connect(0);
  }

  private async connect(attempt: number): Promise<void> {
    if (this.stopped) return;
    try {
      this.subscription = await subscribe(this.info, (event) => this.emit(event), {
        onError: (error) => {
          if (this.stopped) return;
          this.log.warn({ err: error }, 'event stream lost; reconnecting');
          void this.subscription?.close();
          this.subscription = undefined;
          this.scheduleReconnect(1);
        },
      });
    } catch (error) {
      this.log.warn({ err: error }, 'event stream connect failed; retrying');
      this.scheduleReconnect(attempt + 1);
    }
  }

  private scheduleReconnect(attempt: number): void {
    if (this.stopped || this.retryTimer) return;
    const delay = Math.min(30_000, 500 * 2 ** Math.min(attempt, 6));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect(attempt);
    }, delay);
    this.retryTimer.unref();
  }

  emit(event: JobEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  on(listener: (event: JobEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.subscription?.close();
  }
}
