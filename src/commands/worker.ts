import { Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { startCrawlWorkers } from '../core/crawl/index.js';
import { openDatabase } from '../core/db/connect.js';
import { packsAtStart } from '../daemon/packs-at-start.js';
import type { Database } from '../core/db/connect.js';
import type { Logger } from 'pino';
import { createLogger } from '../daemon/logger.js';
import type { BackgroundService } from '../daemon/server.js';
import { documentStages } from '../core/pipeline/stages.js';

export default class Worker extends BaseCommand<typeof Worker> {
  static override summary = 'Run crawl, upload and LLM workers until SIGINT/SIGTERM.';
  static override description =
    'Any number of workers, on one machine or several, share the jobs in one PostgreSQL: each page of a crawl is a queue job any worker can take. Stopping is graceful: pages in flight get a few seconds to finish and the rest go back to the queue.';
  static override examples = ['<%= config.bin %> worker', '<%= config.bin %> worker --concurrency 10', '<%= config.bin %> worker --only crawl'];
  static override enableJsonFlag = false;
  static override flags = {
    concurrency: Flags.integer({ description: 'Crawl pages fetched at once by this worker (default MAX_CONCURRENT_CRAWLS).', min: 1, max: 100 }),
    only: Flags.string({
      description: 'Run only these kinds of work (repeatable); e.g. dedicated crawl machines use --only crawl.',
      options: ['crawl', 'upload', 'llm'],
      multiple: true,
    }),
  };

  async run(): Promise<void> {
    const concurrency = this.flags.concurrency ?? this.settings.crawl.maxConcurrent;
    const kinds = new Set(this.flags.only ?? ['crawl', 'upload', 'llm']);
    const log = createLogger();
    // The crawl worker brings its own connections; this pool serves the upload and LLM workers.
    const db = await openDatabase(this.settings, { max: 10, applicationName: 'docdex-worker' });
    const services: BackgroundService[] = [];
    try {
      await packsAtStart(db, this.settings, log);
      if (kinds.has('crawl')) await this.startCrawl(db, concurrency, log, services);
      if (kinds.has('upload') || kinds.has('llm')) {
        // Loaded only when wanted: the LLM worker's tokenizer alone is tens of MB, which a crawl-only machine saves.
        const { llmWorkerService, uploadWorkerService } = await import('../daemon/services.js');
        if (kinds.has('upload')) services.push(await uploadWorkerService(db, this.settings, log));
        if (kinds.has('llm')) services.push(await llmWorkerService(db, this.settings, log));
      }
      log.info({ concurrency, services: services.map((s) => s.name), database: db.info.display }, 'docdex worker running; Ctrl-C to stop');
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

  private async startCrawl(db: Database, concurrency: number, log: Logger, services: BackgroundService[]): Promise<void> {
    const crawl = await startCrawlWorkers(db, this.settings, {
      concurrency,
      stages: documentStages(this.settings),
      onError: (error) => log.warn({ err: error }, 'crawl worker error'),
      onEvent: (event) => {
        if (event.type === 'adopted') log.info({ job: event.jobId }, 'controlling crawl job');
        else if (event.type === 'job-finished') log.info({ job: event.jobId, status: event.status }, 'crawl job finished');
        else if (event.type === 'controller-ended' && event.reason === 'finished') log.info({ job: event.jobId }, 'crawl job finished');
        else if (event.type === 'presence-lost') log.warn({ error: event.error }, 'lost the database session; reconnecting');
      },
    });
    services.push({ name: 'crawl', stop: () => crawl.stop() });
    log.info({ worker: crawl.id }, 'crawl worker started');
  }
}
