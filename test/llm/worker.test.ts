import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { subscribe } from '../../src/core/events/notify.js';
import type { JobEvent } from '../../src/core/events/notify.js';
import { createBoss } from '../../src/core/queue/boss.js';
import { documentStages, stageUpkeep } from '../../src/core/pipeline/stages.js';
import type { EnhancePageResult } from '../../src/core/llm/enhance.js';
import { enqueuePageEnhancement, startLlmWorkers } from '../../src/core/llm/worker.js';
import type { LlmWorkers, PageEnhancementJob } from '../../src/core/llm/worker.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { createCrawlJob, jobUsage, searchIds, snippetStates, storeTestPage, widgetPage } from './fixtures.js';
import { answerFor, startStubServer } from './stub-server.js';
import type { StubServer } from './stub-server.js';

let db: TestDatabase;
let stub: StubServer;
let boss: PgBoss;

const NEW_DESCRIPTION =
  'Builds a widget through the factory and spins it once, the quickest dirigible check that the installation works before you wire widgets into a larger gear train in production code.';

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function llmConfig() {
  return loadConfig({ ...db.env, CODE_ENABLE_LLM_EXTRACTION: 'true', CODE_LLM_BASE_URL: stub.baseUrl, CODE_LLM_EXTRACTION_MODEL: 'stub-model' });
}

beforeAll(async () => {
  [db, stub] = await Promise.all([createTestDatabase(), startStubServer()]);
  boss = createBoss(db.info, { max: 2 });
  boss.on('error', () => undefined);
  await boss.start();
});
afterAll(async () => {
  await boss.stop({ graceful: false, close: true });
  await stub.close();
  await db.drop();
});

describe('the LLM stage', () => {
  it('starts nothing when enhancement is disabled', async () => {
    const workers = await startLlmWorkers(db, db.config, { upkeep: stageUpkeep(documentStages(db.config)) });
    await workers.stop();
    expect(await boss.getQueue('docdex-llm-enhance')).toBeNull();
  });

  it('never holds up storage: snippets are searchable at once and enhanced when the slow model answers', async () => {
    const SLOW_MS = 2000;
    stub.setDefault((body) => ({
      content: answerFor(body, (b) => (b.code.includes('widget.spin') ? { description: NEW_DESCRIPTION } : {})),
      delayMs: SLOW_MS,
    }));
    const events: JobEvent[] = [];
    const subscription = await subscribe(db.info, (e) => events.push(e), { channels: ['llm_progress'] });
    const pages: Array<{ job: PageEnhancementJob; result: EnhancePageResult }> = [];
    let workers: LlmWorkers | undefined;
    try {
      workers = await startLlmWorkers(db, llmConfig(), { upkeep: stageUpkeep(documentStages(llmConfig())), pollingIntervalSeconds: 0.5, onPage: (job, result) => pages.push({ job, result }) });
      const ids = await createCrawlJob(db.pool, 'slow-source');
      const page = widgetPage('https://docs.example.test/slow', 'slow');
      const stored = await storeTestPage(db.pool, ids, page);
      const jobId = await enqueuePageEnhancement(boss, {
        jobKind: 'crawl',
        jobId: ids.jobId,
        sourceId: ids.sourceId,
        documentId: stored.documentId,
        snippetIds: stored.snippetIds,
        pageTitle: page.title,
      });
      expect(jobId).toEqual(expect.any(String));
      const useId = stored.snippetIds[1]!;

      // Storage and queueing are done; the model has not answered anything yet.
      expect(stub.completed).toBe(0);
      expect(await searchIds(db.pool, 'spin', stored.snippetIds)).toEqual([useId]);
      expect(await searchIds(db.pool, 'dirigible', stored.snippetIds)).toEqual([]);
      expect((await snippetStates(db.pool, stored.snippetIds)).every((s) => !s.llm_enhanced)).toBe(true);

      await waitFor('enhancement', async () => ((await snippetStates(db.pool, stored.snippetIds)).every((s) => s.llm_enhanced) ? true : undefined));
      expect(stub.completed).toBe(1);
      // The generated search vector followed the new description: a word only the model wrote now finds it.
      expect(await searchIds(db.pool, 'dirigible', stored.snippetIds)).toEqual([useId]);
      expect(await jobUsage(db.pool, ids.jobId)).toEqual({ llm_calls: 1, llm_tokens: 150 });
      expect(pages).toEqual([{ job: expect.objectContaining({ documentId: stored.documentId }), result: expect.objectContaining({ enhanced: 3, calls: 1 }) }]);
      const event = await waitFor('llm_progress event', async () => events.find((e) => e.jobId === ids.jobId));
      expect(event).toMatchObject({ event: 'llm_progress', kind: 'llm', state: 'running', counters: { llm_calls: 1, llm_tokens: 150, snippets_enhanced: 3, cache_hits: 0 } });
    } finally {
      await workers?.stop();
      await subscription.close();
      stub.setDefault((body) => ({ content: answerFor(body) }));
    }
  });

  it('a failing model leaves the page as extracted and reports the error, without touching the crawl job', async () => {
    stub.setDefault(() => ({ status: 500 }));
    const errors: unknown[] = [];
    let workers: LlmWorkers | undefined;
    try {
      workers = await startLlmWorkers(db, llmConfig(), {
        upkeep: stageUpkeep(documentStages(llmConfig())),
        pollingIntervalSeconds: 0.5,
        client: { maxAttempts: 2, sleep: async () => undefined },
        onError: (error) => errors.push(error),
      });
      const ids = await createCrawlJob(db.pool, 'failing-source');
      const page = widgetPage('https://docs.example.test/failing', 'failing');
      const stored = await storeTestPage(db.pool, ids, page);
      await enqueuePageEnhancement(boss, { jobKind: 'crawl', jobId: ids.jobId, sourceId: ids.sourceId, documentId: stored.documentId, snippetIds: stored.snippetIds, pageTitle: page.title });
      await waitFor('the error', async () => (errors.length > 0 ? true : undefined));
      expect(String(errors[0])).toMatch(/answered 500/);
      const states = await snippetStates(db.pool, stored.snippetIds);
      expect(states.map((s) => [s.title, s.llm_enhanced])).toEqual([
        ['Example', false],
        ['Widget Guide', false],
        ['Installing widgets', false],
      ]);
      const job = await db.pool.query('SELECT status, error, llm_calls FROM crawl_jobs WHERE id = $1', [ids.jobId]);
      expect(job.rows[0]).toEqual({ status: 'running', error: null, llm_calls: 0 });
    } finally {
      await workers?.stop();
      stub.setDefault((body) => ({ content: answerFor(body) }));
    }
  });

  it('does not queue pages without snippets', async () => {
    expect(await enqueuePageEnhancement(boss, { jobKind: 'crawl', jobId: 'x', sourceId: 'y', documentId: 'z', snippetIds: [], pageTitle: '' })).toBeNull();
  });
});
