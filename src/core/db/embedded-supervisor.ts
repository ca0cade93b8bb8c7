import { embeddedPaths, embeddedServerState, rotateEmbeddedLog, startEmbeddedPostgres } from './embedded.js';

/**
 * Keeps the embedded PostgreSQL up while `docdex serve` runs. A server that crashed (its postmaster.pid left
 * behind) is started again, with exponential backoff between failed attempts: right after a postmaster is
 * killed its backends may still hold the shared memory for a moment, and the start is refused until they
 * exit. A server stopped cleanly (`docdex db stop`) stays stopped. The log is rotated at each check.
 */

export type SupervisorEvent =
  | { type: 'down' }
  | { type: 'restart-attempt'; attempt: number }
  | { type: 'restarted'; attempt: number; port: number }
  | { type: 'restart-failed'; attempt: number; error: string; retryInMs: number }
  | { type: 'log-rotated' }
  | { type: 'check-failed'; error: string };

export interface SupervisorOptions {
  /** Time between checks of the server while it is up. Default 2 s. */
  checkMs?: number;
  /** First wait after a failed restart, doubled after each failure up to maxBackoffMs. Default 1 s and 30 s. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  onEvent?: (event: SupervisorEvent) => void;
}

export interface EmbeddedSupervisor {
  stop(): Promise<void>;
}

export function superviseEmbeddedPostgres(home: string, options: SupervisorOptions = {}): EmbeddedSupervisor {
  const checkMs = options.checkMs ?? 2000;
  const minBackoff = options.minBackoffMs ?? 1000;
  const maxBackoff = options.maxBackoffMs ?? 30_000;
  const emit = (event: SupervisorEvent) => options.onEvent?.(event);
  const logFile = embeddedPaths(home).logFile;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let wake: (() => void) | null = null;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
      timer.unref();
    });

  /** Restarts the crashed server, backing off between failures; resolves once it is up or supervision stops. */
  const restart = async (): Promise<void> => {
    emit({ type: 'down' });
    let delay = minBackoff;
    for (let attempt = 1; !stopped; attempt++) {
      emit({ type: 'restart-attempt', attempt });
      try {
        const connection = await startEmbeddedPostgres(home);
        emit({ type: 'restarted', attempt, port: connection.port });
        return;
      } catch (error) {
        emit({ type: 'restart-failed', attempt, error: (error as Error).message, retryInMs: delay });
      }
      await pause(delay);
      delay = Math.min(delay * 2, maxBackoff);
    }
  };

  const loop = async (): Promise<void> => {
    while (!stopped) {
      try {
        if (await rotateEmbeddedLog(logFile)) emit({ type: 'log-rotated' });
        if (embeddedServerState(home) === 'crashed') await restart();
      } catch (error) {
        emit({ type: 'check-failed', error: (error as Error).message });
      }
      if (!stopped) await pause(checkMs);
    }
  };
  const running = loop();

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      (wake as (() => void) | null)?.();
      await running;
    },
  };
}
