import { startCrawlWorkers } from '../core/crawl/index.js';
import { searchesBusy } from '../core/search/shared.js';
import { startLlmWorkers } from '../core/llm/worker.js';
import { documentStages, stageUpkeep } from '../core/pipeline/stages.js';
import { startUploadWorkers } from '../core/upload/worker.js';
import type { RequiredServiceStarter, ServiceStarter } from './server.js';

/**
 * The pg-boss workers every long-lived docdex process runs: `docdex serve`, `docdex worker` and
 * `docdex serve --mcp`. Each takes whatever job any process queued in the shared database.
 */
export const crawlWorkerService: RequiredServiceStarter = async (db, config, log) => {
  // Searches served by this process come first: the crawl gives way to them (core/crawl/courtesy.ts).
  const workers = await startCrawlWorkers(db, config, {
    giveWayTo: searchesBusy,
    stages: documentStages(config),
    onError: (error) => log.warn({ err: error }, 'crawl worker error'),
  });
  return { name: 'crawl', stop: () => workers.stop() };
};

export const uploadWorkerService: RequiredServiceStarter = async (db, config, log) => {
  const workers = await startUploadWorkers(db, config, { stages: documentStages(config), onError: (error) => log.warn({ err: error }, 'upload worker error') });
  return { name: 'upload', stop: () => workers.stop() };
};

export const llmWorkerService: RequiredServiceStarter = async (db, config, log) => {
  const workers = await startLlmWorkers(db, config, { upkeep: stageUpkeep(documentStages(config)), onError: (error) => log.warn({ err: error }, 'llm worker error') });
  return { name: 'llm', stop: () => workers.stop() };
};

export const docsIndexServices: ServiceStarter[] = [crawlWorkerService, uploadWorkerService, llmWorkerService];
