import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { startCrawlWorkers } from '../../src/core/crawl/index.js';
import { completeEnhancedJob, recordPageDone } from '../../src/core/llm/job-stage.js';
import { LLM_QUEUE } from '../../src/core/llm/queue.js';
import { indexUpkeepStage } from '../../src/core/pipeline/index-upkeep.js';
import { documentStages, inTransactionSteps, runPostCommitStages, settleStages, stageUpkeep } from '../../src/core/pipeline/stages.js';
import type { PostCommitStage } from '../../src/core/pipeline/stages.js';
import { createBoss } from '../../src/core/queue/boss.js';
import { storePage } from '../../src/core/store/pages.js';
import type { PageWrite } from '../../src/core/store/pages.js';
import { createUploadFromContent } from '../../src/core/upload/jobs.js';
import { processUploadFile } from '../../src/core/upload/worker.js';
import { crawlToEnd, FAST_WORKER } from '../crawl/helpers/crawl.js';
import { docPage, TestSite } from '../crawl/helpers/site.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { createCrawlJob, widgetPage } from '../llm/fixtures.js';

/**
 * A page write does what the stages it is given say, and nothing else: the store itself folds no lexicon,
 * merges no index and queues no LLM work (src/core/pipeline/stages.ts).
 */

let db: TestDatabase;
let boss: PgBoss;

// Enhancement on, so the LLM stage would queue every page with snippets; nothing here runs the model.
const llmConfig = () => loadConfig({ ...db.env, CODE_ENABLE_LLM_EXTRACTION: 'true', CODE_LLM_BASE_URL: 'http://127.0.0.1:9/v1', CODE_LLM_EXTRACTION_MODEL: 'stub-model' });

beforeAll(async () => {
  db = await createTestDatabase();
  boss = createBoss(db.info, { max: 2 });
  boss.on('error', () => undefined);
  await boss.start();
});
afterAll(async () => {
  await boss.stop({ graceful: false, close: true });
  await db.drop();
});

const count = async (sql: string, params: unknown[] = []) => Number((await db.pool.query<{ n: string }>(sql, params)).rows[0]!.n);
const queuedForLexicon = (ids: number[]) => count('SELECT count(*) AS n FROM search_terms_queue WHERE snippet_id = ANY($1::bigint[])', [ids]);
const llmJobs = (jobId: string) => count(`SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND data->>'jobId' = $2`, [LLM_QUEUE, jobId]);
const queuedForSource = (sourceId: string | null) => count('SELECT count(*) AS n FROM search_terms_queue q JOIN snippets s ON s.id = q.snippet_id WHERE s.source_id = $1', [sourceId]);
const unsureLanguages = (ids: number[]) => count('SELECT count(*) AS n FROM snippets WHERE id = ANY($1::bigint[]) AND language_confidence IS NOT NULL', [ids]);

async function storeWidgets(variant: string, stages: readonly PostCommitStage[]) {
  const ids = await createCrawlJob(db.pool, `stages-${variant}`);
  const page = widgetPage(`https://docs.example.test/${variant}`, variant);
  const write: PageWrite = { sourceId: ids.sourceId, url: page.url, title: page.title, markdown: page.markdown, contentHash: variant, job: { kind: 'crawl', id: ids.jobId }, snippets: page.snippets };
  const stored = await storePage(db.pool, write, inTransactionSteps(stages));
  const errors: unknown[] = [];
  await runPostCommitStages(stages, { job: write.job, sourceId: ids.sourceId, title: write.title, stored }, { pool: db.pool, boss, onError: (e) => errors.push(e) });
  expect(errors).toEqual([]);
  return { ids, stored };
}

describe('the document pipeline', () => {
  it('stores a page with no stages: its snippets stay queued for the lexicon, no language rows, no LLM job', async () => {
    const { ids, stored } = await storeWidgets('bare', []);
    expect(stored.newSnippetIds).toHaveLength(3);
    expect(stored.replaced).toBe(false);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await queuedForLexicon(stored.newSnippetIds)).toBe(3);
    expect(await unsureLanguages(stored.newSnippetIds)).toBe(0);
    expect(await llmJobs(ids.jobId)).toBe(0);
  });

  it('stores a page with the document stages: the lexicon is folded, unsure languages recorded, the page queued for the LLM', async () => {
    const { ids, stored } = await storeWidgets('staged', documentStages(llmConfig()));
    expect(await queuedForLexicon(stored.newSnippetIds)).toBe(0);
    expect(await unsureLanguages(stored.newSnippetIds)).toBe(2);
    expect(await llmJobs(ids.jobId)).toBe(1);
  });

  it('counts an uploaded file with the page whatever the stages, and queues it for the LLM only when given the stage', async () => {
    const upload = (name: string) =>
      createUploadFromContent({ pool: db.pool, info: db.info }, db.config, { content: `# ${name}\n\n\`\`\`python\nprint("${name}")\n\`\`\`\n`, title: name, name: 'upload-stages' });
    const job = await upload('a');
    const bare = await db.pool.query<{ id: number }>('SELECT id FROM upload_files WHERE job_id = $1', [job.id]);
    expect(await processUploadFile(db.pool, bare.rows[0]!.id, { stages: [] })).toBe('done');
    expect(await count('SELECT processed_files AS n FROM upload_jobs WHERE id = $1', [job.id])).toBe(1);
    expect(await llmJobs(job.id)).toBe(0);

    const staged = await upload('b');
    const file = await db.pool.query<{ id: number }>('SELECT id FROM upload_files WHERE job_id = $1', [staged.id]);
    const errors: unknown[] = [];
    const outcome = await processUploadFile(db.pool, file.rows[0]!.id, { stages: documentStages(llmConfig()), services: { boss, onError: (e) => errors.push(e) } });
    expect(outcome).toBe('done');
    expect(errors).toEqual([]);
    expect(await count('SELECT processed_files AS n FROM upload_jobs WHERE id = $1', [staged.id])).toBe(1);
    expect(await llmJobs(staged.id)).toBe(1);
  });

  it('crawls with the stages the workers were given: none queues no LLM work, the default queues every page', async () => {
    const site = await TestSite.start();
    site.set('/', { body: docPage({ title: 'Gears', links: ['/teeth'], code: 'gear = Gear(teeth=12)' }) });
    site.set('/teeth', { body: docPage({ title: 'Teeth', code: 'gear.teeth = 24' }) });
    try {
      const bare = await startCrawlWorkers(db, llmConfig(), { ...FAST_WORKER, stages: [] });
      const first = await crawlToEnd(db, db.config, { name: 'gears-bare', start_urls: [site.url('/')], max_depth: 1 }).finally(() => bare.stop());
      expect(first.status).toBe('completed');
      expect(first.pages_crawled).toBe(2);
      expect(await llmJobs(first.job_id)).toBe(0);

      const staged = await startCrawlWorkers(db, llmConfig(), FAST_WORKER);
      const second = await crawlToEnd(db, db.config, { name: 'gears-staged', start_urls: [site.url('/')], max_depth: 1 }).finally(() => staged.stop());
      expect(second.status).toBe('completed');
      expect(await llmJobs(second.job_id)).toBe(2);
    } finally {
      await site.close();
    }
  });

  it("runs the stages' completion hooks before a crawl reads completed: without index upkeep its words stay queued", async () => {
    // Whatever earlier writes left waiting is folded now, so only this test's crawls touch the queue.
    await settleStages([indexUpkeepStage], db.pool);
    // Index upkeep that does nothing after each page: only its completion hook can fold the crawl's words in.
    const atCompletionOnly: PostCommitStage = { ...indexUpkeepStage, afterCommit: async () => undefined };
    const site = await TestSite.start();
    site.set('/', { body: docPage({ title: 'Pulleys', links: ['/belts'], code: 'pulley = Pulley(radius=3)' }) });
    site.set('/belts', { body: docPage({ title: 'Belts', code: 'belt.tension = 40' }) });
    try {
      const bare = await startCrawlWorkers(db, db.config, { ...FAST_WORKER, stages: [] });
      try {
        const first = await crawlToEnd(db, db.config, { name: 'pulleys-bare', start_urls: [site.url('/')], max_depth: 1 });
        expect(first.status).toBe('completed');
        // Two pages, each a code snippet and a section (migration 038): all four units' words wait.
        expect(await queuedForSource(first.source_id)).toBe(4);
      } finally {
        await bare.stop();
      }
      const upkept = await startCrawlWorkers(db, db.config, { ...FAST_WORKER, stages: [atCompletionOnly] });
      try {
        const second = await crawlToEnd(db, db.config, { name: 'pulleys-upkept', start_urls: [site.url('/')], max_depth: 1 });
        expect(second.status).toBe('completed');
        // Read before the workers stop (their stop settles too): the completion alone folded every queued word.
        expect(await count('SELECT count(*) AS n FROM search_terms_queue')).toBe(0);
      } finally {
        await upkept.stop();
      }
    } finally {
      await site.close();
    }
  });

  it('runs the hooks it was lent before the LLM stage completes a job: without index upkeep the words stay queued', async () => {
    await settleStages([indexUpkeepStage], db.pool);
    const atCompletionOnly: PostCommitStage = { ...indexUpkeepStage, afterCommit: async () => undefined };
    const enhancedJob = async (variant: string) => {
      const { ids, stored } = await storeWidgets(variant, []);
      const page = { jobKind: 'crawl', jobId: ids.jobId, sourceId: ids.sourceId, documentId: stored.documentId, snippetIds: stored.newSnippetIds, pageTitle: variant } as const;
      await recordPageDone(db.pool, page, { enhanced: 0, error: null });
      await db.pool.query(`UPDATE crawl_jobs SET status = 'enhancing' WHERE id = $1`, [ids.jobId]);
      return { ids, stored };
    };
    const bare = await enhancedJob('enhanced-bare');
    expect(await completeEnhancedJob(db.pool, 'crawl', bare.ids.jobId, stageUpkeep([]))).toBe(true);
    expect(await queuedForLexicon(bare.stored.newSnippetIds)).toBe(3);

    const upkept = await enhancedJob('enhanced-upkept');
    expect(await completeEnhancedJob(db.pool, 'crawl', upkept.ids.jobId, stageUpkeep([atCompletionOnly]))).toBe(true);
    expect(await count('SELECT count(*) AS n FROM search_terms_queue')).toBe(0);
  });
});
