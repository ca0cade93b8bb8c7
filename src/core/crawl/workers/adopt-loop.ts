import type pg from 'pg';
import { releaseControl, runController } from '../controller.js';
import type { ControllerContext } from '../controller.js';
import type { Doorbell } from '../doorbell.js';
import type { KnownJobs } from './known-jobs.js';
import type { Presence } from './presence.js';

type ControllerEnd = 'finished' | 'lost' | 'stopped';

interface AdoptLoopOptions {
  pool: pg.Pool;
  workerId: string;
  /** What a controller needs (see controller.ts). */
  controller: ControllerContext;
  /** Controllers run at once; 0 means this worker adopts none. */
  maxControllers: number;
  idlePollMs: number;
  presence: Presence;
  jobs: KnownJobs;
  /** Rung on a wake-up other than queued pages, and when a controller ends: look for a job to adopt. */
  adoptBell: Doorbell;
  /** Rung when a controller ends, so the page loop reads the caps again. */
  pageBell: Doorbell;
  /** Aborted when the worker stops: controllers hand their jobs back and no more are adopted. */
  stopping: AbortSignal;
  onAdopted(jobId: string): void;
  onControllerEnded(jobId: string, reason: ControllerEnd): void;
  onError(error: Error): void;
}

/** Hands this worker a job that needs a controller (queued, or its controller's session is gone), if any. */
async function adoptJob(pool: pg.Pool, workerId: string): Promise<string | undefined> {
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM crawl_adopt_job($1) AS id', [workerId]);
  return rows[0]?.id;
}

/**
 * The adopt loop: while its presence session is up and it has room, the worker adopts crawl jobs that need a
 * controller and runs one controller per job (controller.ts).
 */
export class Controllers {
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly options: AdoptLoopOptions) {}

  async adoptLoop(): Promise<void> {
    const { pool, workerId, maxControllers, presence, adoptBell, stopping, onError } = this.options;
    while (!stopping.aborted && maxControllers > 0) {
      if (presence.isUp && this.running.size < maxControllers) {
        try {
          const id = await adoptJob(pool, workerId);
          if (id) {
            this.start(id);
            continue;
          }
        } catch (error) {
          if (stopping.aborted) break;
          onError(error as Error);
        }
      }
      await adoptBell.wait(Math.max(this.options.idlePollMs, 2000));
    }
  }

  /** Resolves when every controller running now has ended. */
  async allEnded(): Promise<void> {
    await Promise.allSettled([...this.running.values()]);
  }

  private start(id: string): void {
    const { pool, workerId, stopping, onError } = this.options;
    this.options.onAdopted(id);
    const run = runController(this.options.controller, id, stopping)
      .then((reason) => {
        this.options.onControllerEnded(id, reason);
        this.options.pageBell.ring();
      })
      .catch((error: unknown) => {
        onError(error as Error);
        // Let another worker (or this one, after a pause) take over rather than leave the job headless.
        return releaseControl(pool, id, workerId);
      })
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.running.delete(id);
        this.options.jobs.controllerEnded(id);
        this.options.adoptBell.ring();
      });
    this.running.set(id, run);
  }
}
