import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { LlmClient, LlmRequestError } from '../../src/core/llm/client.js';
import { enhancePage } from '../../src/core/llm/enhance.js';
import type { EnhanceDeps, PageEnhancement } from '../../src/core/llm/enhance.js';
import { recordLanguageConfidence } from '../../src/core/llm/language-confidence.js';
import { PROMPT_VERSION } from '../../src/core/llm/prompt.js';
import { documentStages, stageUpkeep } from '../../src/core/pipeline/stages.js';
import { resolveLlmSettings } from '../../src/core/llm/settings.js';
import { extractSections } from '../../src/core/extract/sections.js';
import { storePage } from '../../src/core/store/pages.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { createCrawlJob, jobUsage, searchIds, snippet, snippetStates, storeTestPage, widgetPage } from './fixtures.js';
import { answerFor, GOOD_DESCRIPTION, promptBlocks, startStubServer } from './stub-server.js';
import type { ChatBody, StubBlock, StubServer } from './stub-server.js';

let db: TestDatabase;
let stub: StubServer;

const DEFINE_DESCRIPTION =
  'Defines make_widget, a factory that builds a Widget from a name; use it whenever the guide needs a fresh widget instance before turning gears in your own application code today.';
// "aerostat" appears nowhere on the page: only the model's description brings it into the index.
const USE_DESCRIPTION =
  'Creates a gear widget with the factory and spins it, an aerostat smoke test for checking that a freshly built widget really turns as this guide describes before you build anything bigger.';

function widgetAnswers(block: StubBlock) {
  if (block.code.includes('def make_widget')) return { language: 'python', title: 'Define the widget factory', description: DEFINE_DESCRIPTION };
  if (block.code.includes('widget.spin')) return { language: 'python', title: 'Create and spin a widget', description: USE_DESCRIPTION };
  return { language: 'console', title: 'Install the widgets package', description: GOOD_DESCRIPTION };
}

/** The widget answer, with relationships named by block number as the model sees them. */
function widgetResponder(body: ChatBody) {
  const blocks = promptBlocks(body);
  const find = (needle: string) => blocks.find((b) => b.code.includes(needle))?.n;
  const define = find('def make_widget');
  const use = find('widget.spin');
  const install = find('pip install');
  const relationships = [];
  if (use && define) relationships.push({ from: use, to: define, type: 'imports', reason: 'Calls make_widget defined in the factory block.' });
  if (install && define) relationships.push({ from: install, to: define, type: 'setup-for', reason: 'Installs the package first.' });
  return { content: answerFor(body, widgetAnswers, relationships), usage: { prompt_tokens: 400, completion_tokens: 200, total_tokens: 600 } };
}

function deps(env: Record<string, string> = {}): EnhanceDeps {
  const config = loadConfig({ CODE_ENABLE_LLM_EXTRACTION: 'true', CODE_LLM_BASE_URL: stub.baseUrl, CODE_LLM_EXTRACTION_MODEL: 'stub-model', ...env });
  const settings = resolveLlmSettings(config);
  return {
    pool: db.pool,
    client: new LlmClient(settings, { sleep: async () => undefined, maxAttempts: 2 }),
    limits: { maxCalls: settings.jobMaxCalls, maxTokens: settings.jobMaxTokens },
    upkeep: stageUpkeep(documentStages(config)),
  };
}

async function storeWidgets(url?: string, name?: string, variant = name ?? '') {
  const ids = await createCrawlJob(db.pool, name);
  const page = widgetPage(url, variant);
  const stored = await storeTestPage(db.pool, ids, page);
  const job: PageEnhancement = { jobKind: 'crawl', jobId: ids.jobId, sourceId: ids.sourceId, documentId: stored.documentId, snippetIds: stored.snippetIds, pageTitle: page.title };
  return { ids, page, stored, job };
}

beforeAll(async () => {
  [db, stub] = await Promise.all([createTestDatabase(), startStubServer()]);
});
afterAll(async () => {
  await stub.close();
  await db.drop();
});
beforeEach(() => {
  stub.requests.length = 0;
  stub.setDefault(widgetResponder);
});

describe('enhancePage', () => {
  it('improves titles, descriptions and unsure languages, stores relationships and counts the call', async () => {
    const { stored, job, ids } = await storeWidgets(undefined, undefined, 'first');
    const [defineId, useId, installId] = stored.snippetIds as [number, number, number];
    // The hook recorded which languages were guesses.
    expect((await snippetStates(db.pool, stored.snippetIds)).map((s) => s.language_confidence)).toEqual([null, 'unknown', 'detected']);
    expect(await searchIds(db.pool, 'aerostat', stored.snippetIds)).toEqual([]);

    const result = await enhancePage(deps(), job);

    expect(result).toMatchObject({ pending: 3, enhanced: 3, cacheHits: 0, calls: 1, tokens: 600, invalidAnswers: 0, fallbacks: 0, relationships: 2, budgetExhausted: false });
    expect(stub.chatRequests()).toHaveLength(1);
    const states = await snippetStates(db.pool, stored.snippetIds);
    expect(states).toEqual([
      // Generic title replaced; the declared language is not the model's to change.
      { id: defineId, title: 'Define the widget factory', description: DEFINE_DESCRIPTION, language: 'python', language_confidence: null, llm_enhanced: true },
      // The title was the page title; the language was unknown.
      { id: useId, title: 'Create and spin a widget', description: USE_DESCRIPTION, language: 'python', language_confidence: 'llm', llm_enhanced: true },
      // A real heading stays; the detected language is corrected.
      { id: installId, title: 'Installing widgets', description: GOOD_DESCRIPTION, language: 'console', language_confidence: 'llm', llm_enhanced: true },
    ]);
    const rels = await db.pool.query('SELECT source_snippet_id, target_snippet_id, relationship_type, description FROM snippet_relationships ORDER BY relationship_type');
    expect(rels.rows).toEqual([
      { source_snippet_id: useId, target_snippet_id: defineId, relationship_type: 'imports', description: 'Calls make_widget defined in the factory block.' },
      { source_snippet_id: installId, target_snippet_id: defineId, relationship_type: 'setup-for', description: 'Installs the package first.' },
    ]);
    expect(await jobUsage(db.pool, ids.jobId)).toEqual({ llm_calls: 1, llm_tokens: 600 });
    // The generated search vector followed the new description (weight B) and title (weight A).
    expect(await searchIds(db.pool, 'aerostat', stored.snippetIds)).toEqual([useId]);
    expect(await searchIds(db.pool, 'define widget factory', stored.snippetIds)).toEqual([defineId]);
    // ...and the new words join the typo-correction lexicon within about a second (index upkeep folds the queue).
    const deadline = Date.now() + 10_000;
    while ((await db.pool.query("SELECT 1 FROM search_terms WHERE term = 'aerostat'")).rowCount === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect((await db.pool.query("SELECT 1 FROM search_terms WHERE term = 'aerostat'")).rowCount).toBe(1);

    const request = stub.chatRequests()[0]!.body!;
    expect(request.response_format?.json_schema?.name).toBe('snippet_enhancements');
    expect(request.messages[1]!.content).toMatch(/Page title: Widget Guide/);
    expect(request.messages[1]!.content).toMatch(/Page text before the block: .*Then use it:/);

    // A second run finds nothing left to do.
    expect(await enhancePage(deps(), job)).toMatchObject({ pending: 0, calls: 0 });
    expect(stub.chatRequests()).toHaveLength(1);
  });

  it('costs no call for a recrawl of unchanged code, or the same code in another source', async () => {
    const first = await storeWidgets('https://docs.example.test/cache', 'cache-source');
    await enhancePage(deps(), first.job);
    expect(stub.chatRequests()).toHaveLength(1);
    const cached = await db.pool.query('SELECT count(*)::int AS n FROM llm_cache WHERE model = $1 AND prompt_version = $2 AND code_hash = ANY($3::text[])', [
      'stub-model',
      PROMPT_VERSION,
      first.page.snippets.map((s) => s.codeHash),
    ]);
    expect(cached.rows[0].n).toBe(3);

    // Recrawl: the page changed around the code, so the store replaces its snippets with fresh rows.
    const changed = { ...first.page, markdown: `${first.page.markdown}\nA new closing paragraph.\n` };
    const again = await storeTestPage(db.pool, first.ids, changed);
    expect(again.snippetIds).not.toEqual(first.stored.snippetIds);
    const recrawl = await enhancePage(deps(), { ...first.job, documentId: again.documentId, snippetIds: again.snippetIds });
    expect(recrawl).toMatchObject({ pending: 3, enhanced: 3, cacheHits: 3, calls: 0, relationships: 2 });
    expect(stub.chatRequests()).toHaveLength(1);
    expect((await snippetStates(db.pool, again.snippetIds)).map((s) => s.title)).toEqual(['Define the widget factory', 'Create and spin a widget', 'Installing widgets']);

    // The same code on a page of another source.
    const other = await storeWidgets('https://other.example.test/widgets', 'other-source', 'cache-source');
    expect(await enhancePage(deps(), other.job)).toMatchObject({ enhanced: 3, cacheHits: 3, calls: 0, relationships: 2 });
    expect(stub.chatRequests()).toHaveLength(1);
    expect(await jobUsage(db.pool, other.ids.jobId)).toEqual({ llm_calls: 0, llm_tokens: 0 });
  });

  it('retries malformed JSON once, telling the model what was wrong', async () => {
    const { stored, job, ids } = await storeWidgets('https://docs.example.test/retry', 'retry-source');
    stub.script({ content: '{"blocks": [{"block": 1,' });
    const result = await enhancePage(deps(), job);
    expect(result).toMatchObject({ calls: 2, invalidAnswers: 1, enhanced: 3, fallbacks: 0 });
    const retry = stub.chatRequests()[1]!.body!.messages;
    expect(retry.at(-2)).toEqual({ role: 'assistant', content: '{"blocks": [{"block": 1,' });
    expect(retry.at(-1)!.content).toMatch(/^That answer was not usable: the answer is not valid JSON/);
    expect((await snippetStates(db.pool, stored.snippetIds)).every((s) => s.llm_enhanced)).toBe(true);
    expect((await jobUsage(db.pool, ids.jobId)).llm_calls).toBe(2);
  });

  it('keeps the heuristic values when the answer is invalid twice, and caches nothing', async () => {
    const { stored, job, page } = await storeWidgets('https://docs.example.test/fallback', 'fallback-source');
    const before = await snippetStates(db.pool, stored.snippetIds);
    stub.script({ content: 'Sure! Here are your descriptions.' }, { content: JSON.stringify({ blocks: [{ block: 1, title: 'No language field' }], relationships: [] }) });
    const result = await enhancePage(deps(), job);
    expect(result).toMatchObject({ calls: 2, invalidAnswers: 2, enhanced: 0, fallbacks: 3, relationships: 0 });
    expect(await snippetStates(db.pool, stored.snippetIds)).toEqual(before);
    expect(before.map((s) => s.title)).toEqual(['Example', 'Widget Guide', 'Installing widgets']);
    // An unusable answer is not cached: a later run asks again.
    const cached = await db.pool.query('SELECT 1 FROM llm_cache WHERE code_hash = ANY($1::text[])', [page.snippets.map((s) => s.codeHash)]);
    expect(cached.rowCount).toBe(0);
    expect(await enhancePage(deps(), job)).toMatchObject({ calls: 1, enhanced: 3 });
  });

  it('uses the best partial answer after the retry, and drops single bad fields', async () => {
    const ids = await createCrawlJob(db.pool, 'partial-source');
    const codes = ['alpha_setting = 1', 'beta_setting = 2', 'gamma_setting = 3'];
    const page = {
      url: 'https://docs.example.test/partial',
      title: 'Settings',
      markdown: codes.map((c) => `\`\`\`python\n${c}\n\`\`\``).join('\n\n'),
      snippets: codes.map((c, i) => snippet(i, c, { title: 'Code' })),
    };
    const stored = await storeTestPage(db.pool, ids, page);
    const long = Array.from({ length: 75 }, () => 'word').join(' ');
    const partial = (body: ChatBody) => ({
      content: answerFor(body, (b) => (b.code.includes('beta') ? { description: long } : {}))
        .replace(/\{"block":3[^}]*\},?/, '')
        .replace(',]', ']'),
    });
    stub.script(partial, partial);
    const result = await enhancePage(deps(), { jobKind: 'crawl', jobId: ids.jobId, sourceId: ids.sourceId, documentId: stored.documentId, snippetIds: stored.snippetIds, pageTitle: 'Settings' });
    expect(result).toMatchObject({ calls: 2, invalidAnswers: 2, enhanced: 2, fallbacks: 1, rejectedFields: 1 });
    const states = await snippetStates(db.pool, stored.snippetIds);
    expect(states.map((s) => [s.title, s.description === GOOD_DESCRIPTION, s.llm_enhanced])).toEqual([
      ['Stub title for block 1', true, true],
      // The 75-word description was refused; the title still applied.
      ['Stub title for block 2', false, true],
      ['Code', false, false],
    ]);
  });

  it('stops at the per-job call budget and the token budget', async () => {
    const ids = await createCrawlJob(db.pool, 'budget-source');
    const codes = Array.from({ length: 8 }, (_, i) => `budget_value_${i} = compute_budget(${i})`);
    const page = { url: 'https://docs.example.test/budget', title: 'Budget', markdown: codes.join('\n\n'), snippets: codes.map((c, i) => snippet(i, c)) };
    const stored = await storeTestPage(db.pool, ids, page);
    const job: PageEnhancement = { jobKind: 'crawl', jobId: ids.jobId, sourceId: ids.sourceId, documentId: stored.documentId, snippetIds: stored.snippetIds, pageTitle: 'Budget' };

    const capped = await enhancePage(deps({ CODE_LLM_JOB_MAX_CALLS: '1' }), job);
    // Eight blocks make two batches (6 + 2); the budget allows one call.
    expect(capped).toMatchObject({ calls: 1, budgetExhausted: true, enhanced: 6, fallbacks: 0 });
    expect(stub.chatRequests()).toHaveLength(1);
    expect((await jobUsage(db.pool, ids.jobId)).llm_calls).toBe(1);
    expect((await snippetStates(db.pool, stored.snippetIds)).filter((s) => !s.llm_enhanced)).toHaveLength(2);

    // The remaining batch's worst case (prompt + maximum answer) does not fit 200 more tokens.
    const used = (await jobUsage(db.pool, ids.jobId)).llm_tokens;
    const tokenCapped = await enhancePage(deps({ CODE_LLM_JOB_MAX_TOKENS: String(used + 200) }), job);
    expect(tokenCapped).toMatchObject({ pending: 2, calls: 0, budgetExhausted: true, enhanced: 0 });
    expect(stub.chatRequests()).toHaveLength(1);

    // With room again the rest goes through.
    expect(await enhancePage(deps({ CODE_LLM_JOB_MAX_CALLS: '0', CODE_LLM_JOB_MAX_TOKENS: '0' }), job)).toMatchObject({ calls: 1, enhanced: 2 });
  });

  it("counts an upload job's calls on the upload job", async () => {
    const source = await db.pool.query<{ id: string }>("INSERT INTO sources (name, kind) VALUES ('upload-source', 'upload') RETURNING id");
    const sourceId = source.rows[0]!.id;
    const upload = await db.pool.query<{ id: string }>("INSERT INTO upload_jobs (name, source_id, status) VALUES ('notes', $1, 'processing') RETURNING id", [sourceId]);
    const jobId = upload.rows[0]!.id;
    const page = widgetPage('upload://notes/widgets.md', 'upload');
    const stored = await storePage(db.pool, { sourceId, url: page.url, title: page.title, markdown: page.markdown, contentHash: 'h', job: { kind: 'upload', id: jobId }, snippets: page.snippets }, [
      recordLanguageConfidence,
    ]);
    const result = await enhancePage(deps(), { jobKind: 'upload', jobId, sourceId, documentId: stored.documentId, snippetIds: stored.snippetIds, pageTitle: page.title });
    expect(result).toMatchObject({ calls: 1, enhanced: 3 });
    const usage = await db.pool.query('SELECT llm_calls, llm_tokens FROM upload_jobs WHERE id = $1', [jobId]);
    expect(usage.rows[0]).toEqual({ llm_calls: 1, llm_tokens: 600 });
  });

  it('gives the budget back and throws a retryable error when the endpoint keeps failing', async () => {
    const { stored, job, ids } = await storeWidgets('https://docs.example.test/down', 'down-source');
    stub.setDefault(() => ({ status: 503 }));
    const error = await enhancePage(deps(), job).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRequestError);
    expect((error as LlmRequestError).retryable).toBe(true);
    expect(stub.chatRequests()).toHaveLength(2);
    expect(await jobUsage(db.pool, ids.jobId)).toEqual({ llm_calls: 0, llm_tokens: 0 });
    expect((await snippetStates(db.pool, stored.snippetIds)).every((s) => !s.llm_enhanced)).toBe(true);
  });

  it("never hands a page's sections to the model, even when the job names them (a lost page queued again)", async () => {
    const ids = await createCrawlJob(db.pool, 'sections-source');
    const page = widgetPage('https://docs.example.test/sections', 'sections');
    const write = {
      sourceId: ids.sourceId,
      url: page.url,
      title: page.title,
      markdown: page.markdown,
      contentHash: `sections-${page.url}`,
      job: { kind: 'crawl', id: ids.jobId } as const,
      snippets: page.snippets,
    };
    const stored = await storePage(db.pool, { ...write, sections: extractSections(page, page.snippets) });
    expect(stored.sectionsOnPage).toBeGreaterThan(0);
    // What the sweep of enhancing jobs queues for a lost page: every unit the page's occurrences name.
    const occurring = await db.pool.query<{ id: string; kind: string; title: string }>(
      'SELECT s.id, s.kind, s.title FROM snippet_occurrences o JOIN snippets s ON s.id = o.snippet_id WHERE o.document_id = $1 ORDER BY o.position, s.id',
      [stored.documentId],
    );
    const sections = occurring.rows.filter((r) => r.kind === 'section');
    expect(sections.length).toBe(stored.sectionsOnPage);
    const job: PageEnhancement = {
      jobKind: 'crawl',
      jobId: ids.jobId,
      sourceId: ids.sourceId,
      documentId: stored.documentId,
      snippetIds: occurring.rows.map((r) => Number(r.id)),
      pageTitle: page.title,
    };
    expect(await enhancePage(deps(), job)).toMatchObject({ pending: 3, enhanced: 3 });
    expect(stub.chatRequests().flatMap((r) => promptBlocks(r.body!))).toHaveLength(3);
    const after = await db.pool.query<{ title: string; llm_enhanced: boolean }>('SELECT title, llm_enhanced FROM snippets WHERE id = ANY($1::bigint[]) ORDER BY id', [sections.map((r) => r.id)]);
    expect(after.rows).toEqual([...sections].sort((a, b) => Number(a.id) - Number(b.id)).map((r) => ({ title: r.title, llm_enhanced: false })));
  });
});
