import { Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { startCrawlWorkers } from '../core/crawl/index.js';
import { openDatabase } from '../core/db/connect.js';
import { createLogger } from '../daemon/logger.js';
import type { BackgroundService } from '../daemon/server.js';
import { llmWorkerService, uploadWorkerService } from '../daemon/services.js';

export default class Worker extends BaseCommand<typeof Worker> {
  static override summary = 'Run crawl, upload and LLM workers until SIGINT/SIGTERM.';
  static override description =
    'Any number of workers, on one machine or several, share the jobs in one PostgreSQL: each page of a crawl is a queue job any worker can take. Stopping is graceful: pages in flight get a few seconds to finish and the rest go back to the queue.';
  static override examples = ['<%= config.bin %> worker', '<%= config.bin %> worker --concurrency 10'];
  static override enableJsonFlag = false;
  static override flags = {
    concurrency: Flags.integer({ description: 'Crawl pages fetched at once by this worker (default MAX_CONCURRENT_CRAWLS).', min: 1, max: 100 }),
  };

  async run(): Promise<void> {
    const concurrency = this.flags.concurrency ?? this.settings.crawl.maxConcurrent;
    const log = createLogger();
    const db = await openDatabase(this.settings, { max: concurrency + 10, applicationName: 'docdex-worker' });
    const services: BackgroundService[] = [];
    try {
      const crawl = await startCrawlWorkers(db, this.settings, {
        concurrency,
        onError: (error) => log.warn({ err: error }, 'crawl worker error'),
        onEvent: (event) => {
          if (event.type === 'adopted') log.info({ job: event.jobId }, 'controlling crawl job');
          else if (event.type === 'job-finished') log.info({ job: event.jobId, status: event.status }, 'crawl job finished');
          else if (event.type === 'controller-ended' && event.reason === 'finished') log.info({ job: event.jobId }, 'crawl job finished');
          else if (event.type === 'presence-lost') log.warn({ error: event.error }, 'lost the database session; reconnecting');
        },
      });
      services.push({ name: 'crawl', stop: () => crawl.stop() });
      for (const start of [uploadWorkerService, llmWorkerService]) services.push(await start(db, this.settings, log));
      log.info({ worker: crawl.id, concurrency, services: services.map((s) => s.name), database: db.info.display }, 'docdex worker running; Ctrl-C to stop');
      await new Promise<void>((resolve) => {
        const onSignal = (signal: NodeJS.Signals) => {
          log.info({ signal }, 'stopping: finishing pages in flight');
          resolve();
        };
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
      });
    } finally {
      await Promise.allSettled(services.map((s) => s.stop()));
      await db.close();
      log.info('docdex worker stopped');
    }
  }
}
