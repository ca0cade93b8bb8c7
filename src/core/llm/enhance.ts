import { countTokens } from 'gpt-tokenizer';
import type pg from 'pg';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { releaseCall, reserveCall, settleCall } from './budget.js';
import type { BudgetLimits, LlmJobKind, Reservation } from './budget.js';
import { readCache, writeCache } from './cache.js';
import type { CacheKey, CachedRelationship, CachedResult } from './cache.js';
import { LlmRequestError } from './client.js';
import type { LlmClient } from './client.js';
import { buildMessages, countMessageTokens, groundText, maxOutputTokens, planBatches, PROMPT_VERSION, retryMessages } from './prompt.js';
import type { PromptBlock, PromptPage } from './prompt.js';
import { ANSWER_JSON_SCHEMA, checkAnswer, isGenericTitle, parseAnswer } from './schema.js';
import type { BlockResult, CheckedAnswer } from './schema.js';
import { applyUpdates, insertRelationships, loadPage, loadSnippets } from './store.js';
import type { PageSnippetRow, RelationshipRow, SnippetUpdate } from './store.js';
import type { IndexUpkeep } from './upkeep.js';

/**
 * Enhances the snippets of one stored page: cached answers first (no call), then the rest in batches of
 * neighbouring blocks, each answer validated, retried once when unusable, and otherwise left with the
 * extractor's values. What the model may change is decided per snippet and per field (see decideUpdate).
 */

export interface PageEnhancement {
  jobKind: LlmJobKind;
  jobId: string;
  sourceId: string;
  documentId: string;
  /** The page's snippet ids as storePage returned them, in page order. */
  snippetIds: number[];
  pageTitle: string;
}

export interface EnhanceDeps {
  pool: pg.Pool;
  client: LlmClient;
  limits: BudgetLimits;
  signal?: AbortSignal;
  /** Index upkeep, told when the model's titles and descriptions were written (lent by the workers' starter). */
  upkeep: Pick<IndexUpkeep, 'afterSnippetsRewritten'>;
  /**
   * Records the page's final outcome in the same transaction as its enhanced snippets (the job stage's
   * llm_pages_done), when every batch was answered. Called at most once; `recorded` on the result says whether.
   */
  recordOutcome?: (client: pg.ClientBase, result: EnhancePageResult) => Promise<void>;
}

export interface EnhancePageResult {
  /** Snippets of the page not enhanced before this run. */
  pending: number;
  enhanced: number;
  cacheHits: number;
  calls: number;
  tokens: number;
  /** Answers that failed parsing, the schema or lacked blocks (each costs the one retry). */
  invalidAnswers: number;
  /** Snippets left with the extractor's values because the answer stayed unusable. */
  fallbacks: number;
  budgetExhausted: boolean;
  relationships: number;
  /** Single fields the checks refused (kept heuristic), e.g. a 75-word description. */
  rejectedFields: number;
  /** Set when a batch failed at the endpoint; retryable errors are also thrown after the rest is saved. */
  error?: string;
  /** The page's outcome was recorded with its snippets (EnhanceDeps.recordOutcome). */
  recorded?: boolean;
}

/** The detector was unsure: no language at all, or one guessed from the content rather than declared. */
export function languageIsUnsure(row: Pick<PageSnippetRow, 'language' | 'language_confidence'>): boolean {
  return row.language === 'text' || row.language === '' || row.language_confidence === 'detected' || row.language_confidence === 'unknown';
}

/** The extractor's title says nothing: missing, generic ("Example", "Code", "Usage") or just the page title. */
export function titleNeedsReplacing(title: string, pageTitles: string[]): boolean {
  const t = title.trim().toLowerCase();
  return isGenericTitle(title) || pageTitles.some((p) => p.trim() !== '' && p.trim().toLowerCase() === t);
}

/** What the model's (checked) values change on one snippet. Descriptions always improve on the page excerpt. */
export function decideUpdate(row: PageSnippetRow, result: BlockResult, pageTitles: string[]): SnippetUpdate {
  return {
    id: row.id,
    language: languageIsUnsure(row) && result.language !== null ? result.language : null,
    title: result.title !== null && titleNeedsReplacing(row.title, pageTitles) ? result.title : null,
    description: result.description,
  };
}

interface BatchBlock extends PromptBlock {
  row: PageSnippetRow;
}

interface BatchOutcome {
  checked: CheckedAnswer | null;
  calls: number;
  tokens: number;
  invalid: number;
  budgetExhausted: boolean;
}

interface PlannedBatch {
  blocks: BatchBlock[];
  messages: ChatCompletionMessageParam[];
  maxOut: number;
  /** The first call's budget, taken in page order before any batch runs. */
  reservation: Reservation | null;
}

async function askBatch(deps: EnhanceDeps, job: PageEnhancement, page: PromptPage, batch: PlannedBatch): Promise<BatchOutcome> {
  const outcome: BatchOutcome = { checked: null, calls: 0, tokens: 0, invalid: 0, budgetExhausted: false };
  const { blocks, maxOut } = batch;
  const context = { blockCount: blocks.length, pageTitle: page.title, groundTexts: blocks.map((b) => groundText(page, b)) };
  let messages = batch.messages;
  let best: CheckedAnswer | null = null;
  for (let attempt = 1; attempt <= 2; attempt++) {
    const promptTokens = countMessageTokens(messages);
    const reservation = attempt === 1 ? batch.reservation : await reserveCall(deps.pool, job.jobKind, job.jobId, promptTokens + maxOut, deps.limits);
    if (!reservation) {
      outcome.budgetExhausted = true;
      break;
    }
    let answer;
    try {
      answer = await deps.client.complete({ messages, schema: { name: 'snippet_enhancements', schema: ANSWER_JSON_SCHEMA }, maxOutputTokens: maxOut }, deps.signal);
    } catch (error) {
      await releaseCall(deps.pool, reservation);
      throw error;
    }
    // Some local servers report no usage; the prompt and answer counted locally are close enough for a budget.
    const used = answer.usage?.totalTokens ?? promptTokens + countTokens(answer.content);
    await settleCall(deps.pool, reservation, used);
    outcome.calls++;
    outcome.tokens += used;

    const parsed = parseAnswer(answer.content);
    let reason: string;
    if (parsed.ok) {
      const checked = checkAnswer(parsed.answer, context);
      const missing = blocks.map((_, i) => i + 1).filter((n) => !checked.blocks.has(n));
      if (missing.length === 0) {
        best = checked;
        break;
      }
      if (!best || checked.blocks.size > best.blocks.size) best = checked;
      reason = `blocks ${missing.join(', ')} are missing`;
    } else {
      reason = answer.finishReason === 'length' ? `the answer was cut off at ${maxOut} tokens (${parsed.reason})` : parsed.reason;
    }
    outcome.invalid++;
    messages = retryMessages(messages, answer.content, reason);
  }
  outcome.checked = best;
  return outcome;
}

function emptyResult(): EnhancePageResult {
  return { pending: 0, enhanced: 0, cacheHits: 0, calls: 0, tokens: 0, invalidAnswers: 0, fallbacks: 0, budgetExhausted: false, relationships: 0, rejectedFields: 0 };
}

/** What one page's run collects before it is written: snippet updates, relationships and new cache entries. */
interface PageWork {
  pageTitles: string[];
  idByHash: Map<string, number>;
  updates: SnippetUpdate[];
  relationships: RelationshipRow[];
  cacheEntries: Array<{ codeHash: string; result: CachedResult; tokens: number }>;
}

function addRelationships(work: PageWork, sourceId: number, list: CachedRelationship[]): void {
  for (const r of list) {
    const targetId = work.idByHash.get(r.target_hash);
    if (targetId !== undefined && targetId !== sourceId) work.relationships.push({ sourceId, targetId, type: r.type, description: r.description });
  }
}

/** Applies cached answers (no call) and returns the snippets the model still has to see. */
async function useCachedAnswers(deps: EnhanceDeps, key: CacheKey, pending: PageSnippetRow[], work: PageWork, result: EnhancePageResult): Promise<BatchBlock[]> {
  const cached = await readCache(
    deps.pool,
    key,
    pending.map((r) => r.code_hash),
  );
  for (const row of pending) {
    const hit = cached.get(row.code_hash);
    if (!hit) continue;
    result.cacheHits++;
    work.updates.push(decideUpdate(row, hit, work.pageTitles));
    addRelationships(work, row.id, hit.relationships);
  }
  return pending
    .filter((r) => !cached.has(r.code_hash))
    .map((row) => ({ row, code: row.code, title: row.title, context: row.description, language: row.language, languageSure: !languageIsUnsure(row) }));
}

/**
 * Budget for the first call of each batch is taken in page order, so a tight budget enhances the top of the
 * page rather than whichever batch happened to ask first. The batches then run side by side; the client's
 * semaphore bounds the requests actually in flight.
 */
async function planPageBatches(deps: EnhanceDeps, job: PageEnhancement, page: PromptPage, misses: BatchBlock[]): Promise<PlannedBatch[]> {
  const planned: PlannedBatch[] = [];
  for (const blocks of planBatches(page, misses)) {
    const messages = buildMessages(page, blocks);
    const maxOut = maxOutputTokens(blocks.length);
    const reservation = await reserveCall(deps.pool, job.jobKind, job.jobId, countMessageTokens(messages) + maxOut, deps.limits);
    planned.push({ blocks, messages, maxOut, reservation });
  }
  return planned;
}

/** Folds one batch's outcome into the page's result and work. */
function collectBatch(blocks: BatchBlock[], outcome: BatchOutcome, work: PageWork, result: EnhancePageResult): void {
  result.calls += outcome.calls;
  result.tokens += outcome.tokens;
  result.invalidAnswers += outcome.invalid;
  if (outcome.budgetExhausted) result.budgetExhausted = true;
  const checked = outcome.checked;
  if (!checked) {
    if (!outcome.budgetExhausted || outcome.calls > 0) result.fallbacks += blocks.length;
    return;
  }
  result.rejectedFields += checked.rejected.length;
  const perBlockTokens = Math.round(outcome.tokens / blocks.length);
  blocks.forEach((block, i) => {
    const answer = checked.blocks.get(i + 1);
    if (!answer) {
      result.fallbacks++;
      return;
    }
    const rels: CachedRelationship[] = checked.relationships.filter((r) => r.from === i + 1).map((r) => ({ target_hash: blocks[r.to - 1]!.row.code_hash, type: r.type, description: r.description }));
    work.updates.push(decideUpdate(block.row, answer, work.pageTitles));
    addRelationships(work, block.row.id, rels);
    work.cacheEntries.push({ codeHash: block.row.code_hash, result: { ...answer, relationships: rels }, tokens: perBlockTokens });
  });
}

export async function enhancePage(deps: EnhanceDeps, job: PageEnhancement): Promise<EnhancePageResult> {
  const result = emptyResult();
  const doc = await loadPage(deps.pool, job.documentId);
  if (!doc) return result;
  const rows = await loadSnippets(deps.pool, job.snippetIds);
  const pending = rows.filter((r) => !r.llm_enhanced);
  result.pending = pending.length;
  if (pending.length === 0) return result;

  const page: PromptPage = { title: doc.title || job.pageTitle, url: doc.url, markdown: doc.markdown };
  const work: PageWork = { pageTitles: [doc.title, job.pageTitle], idByHash: new Map(rows.map((r) => [r.code_hash, r.id])), updates: [], relationships: [], cacheEntries: [] };
  const key: CacheKey = { model: deps.client.model, promptVersion: PROMPT_VERSION };
  const misses = await useCachedAnswers(deps, key, pending, work, result);
  const planned = await planPageBatches(deps, job, page, misses);
  const settled = await Promise.allSettled(planned.map((batch) => askBatch(deps, job, page, batch)));

  let failure: unknown;
  settled.forEach((s, index) => {
    if (s.status === 'rejected') failure ??= s.reason;
    else collectBatch(planned[index]!.blocks, s.value, work, result);
  });

  await writeCache(deps.pool, key, work.cacheEntries);
  const record = failure === undefined ? deps.recordOutcome : undefined;
  result.enhanced = await applyUpdates(
    deps.pool,
    work.updates,
    record &&
      (async (client, enhanced) => {
        await record(client, { ...result, enhanced });
        result.recorded = true;
      }),
  );
  // New titles and descriptions are new entries in the search index, like a stored page's.
  if (result.enhanced > 0) deps.upkeep.afterSnippetsRewritten(deps.pool);
  result.relationships = await insertRelationships(deps.pool, work.relationships);

  if (failure !== undefined) {
    result.error = (failure as Error)?.message ?? String(failure);
    // Retryable endpoint failures go back to the queue (what was answered is saved and skipped next time);
    // a bad key or unknown model would fail the same way again, so those end here.
    if (!(failure instanceof LlmRequestError) || failure.retryable) throw failure;
  }
  return result;
}
