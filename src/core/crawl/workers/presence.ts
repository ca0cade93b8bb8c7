import pg from 'pg';
import type { JobEvent } from '../../events/notify.js';
import type { Doorbell } from '../doorbell.js';
import { PAGES_QUEUED, WAKE_CHANNEL } from '../wake.js';
import { sleep } from '../sleep.js';

interface PresenceOptions {
  /** How to reach the database (the session is a connection of its own, outside the worker's pool). */
  connection: pg.ClientConfig;
  workerId: string;
  /** Aborted when the worker stops: a lost session is then not reconnected. */
  stopping: AbortSignal;
  /** Rung on every wake-up; `adopt` too unless the wake-up only says pages were queued. */
  bells: { pages: Doorbell; adopt: Doorbell };
  /** A crawl job reached a final state (a job_complete event). */
  onJobEnded(jobId: string, state: string): void;
  /** The session closed while the worker runs; it is being reconnected. */
  onLost(): void;
  onError(error: Error): void;
}

/**
 * The worker's presence: one session named docdex-worker:<id>, which is how every other worker and
 * `crawl health` know it is alive (see crawl_worker_alive). It listens for wake-ups (pages queued, a new job)
 * and for job_complete events (cancellations, jobs finished elsewhere), and reconnects with backoff when lost.
 */
export class Presence {
  private client: pg.Client | null = null;
  private up = false;

  constructor(private readonly options: PresenceOptions) {}

  /** The session is connected: other workers see this one as alive, so it may adopt jobs. */
  get isUp(): boolean {
    return this.up;
  }

  async connect(): Promise<void> {
    const { connection, workerId } = this.options;
    const client = new pg.Client({ ...connection, application_name: `docdex-worker:${workerId}` });
    client.on('notification', (message) => this.onNotification(message));
    client.on('error', () => undefined);
    client.on('end', () => this.onEnd(client));
    await client.connect();
    await client.query(`LISTEN ${WAKE_CHANNEL}`);
    await client.query('LISTEN job_complete');
    this.client = client;
    this.up = true;
  }

  /** Ends the session; other workers then see this worker as gone. */
  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.up = false;
    await client?.end().catch(() => undefined);
  }

  private onNotification(message: pg.Notification): void {
    if (message.channel === WAKE_CHANNEL) {
      this.options.bells.pages.ring();
      if (message.payload !== PAGES_QUEUED) this.options.bells.adopt.ring();
      return;
    }
    if (!message.payload) return;
    try {
      const event = JSON.parse(message.payload) as JobEvent;
      if (event.kind === 'crawl') this.options.onJobEnded(event.jobId, event.state);
    } catch {
      // Another writer's malformed payload is not ours to crash on.
    }
  }

  private onEnd(client: pg.Client): void {
    if (this.client !== client) return;
    this.up = false;
    this.client = null;
    if (this.options.stopping.aborted) return;
    this.options.onLost();
    void this.reconnect();
  }

  private async reconnect(): Promise<void> {
    // While the session is down, peers see this worker as dead and take its work over; the claim tokens
    // make whatever it finishes meanwhile a no-op.
    for (let delay = 500; !this.options.stopping.aborted; delay = Math.min(delay * 2, 10_000)) {
      try {
        await this.connect();
        this.options.bells.adopt.ring();
        return;
      } catch (error) {
        this.options.onError(error as Error);
        await sleep(delay);
      }
    }
  }
}
