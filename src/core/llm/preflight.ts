import type { Config } from '../config.js';
import { UserError } from '../errors.js';
import { resolveLlmSettings } from './settings.js';
import type { LlmSettings } from './settings.js';

/**
 * The check `crawl start`, `upload` and their REST twins run before any work starts, so a typo in the model
 * name or a stopped Ollama is one clear error up front instead of thousands of failed enhancement jobs later.
 * With enhancement disabled it does nothing. It lists the endpoint's models (GET /models, no tokens spent).
 */

const CHECK_TIMEOUT_MS = 10_000;
// A daemon starting many crawls asks the endpoint once a minute at most.
const SUCCESS_TTL_MS = 60_000;
const recentSuccess = new Map<string, number>();

function modelListed(model: string, ids: string[]): boolean {
  // Ollama lists `llama3.2:latest` for a model pulled as `llama3.2`; some gateways prefix the provider.
  return ids.some((id) => id === model || id === `${model}:latest` || model === `${id}:latest` || id.endsWith(`/${model}`));
}

function llmError(message: string, hint: string, cause?: unknown): UserError {
  return new UserError(message, { code: 'llm_unavailable', hint, ...(cause === undefined ? {} : { cause }) });
}

async function check(settings: LlmSettings, timeoutMs: number): Promise<void> {
  // Loaded only when enhancement is on: the model client is a large dependency that crawl and upload
  // processes without an LLM never need.
  const [{ APIConnectionTimeoutError }, { describeCause, LlmClient, LlmRequestError }] = await Promise.all([import('openai'), import('./client.js')]);
  const client = new LlmClient(settings, { maxAttempts: 1 });
  const off = 'or set CODE_ENABLE_LLM_EXTRACTION=false to index without the LLM';
  let ids: string[];
  try {
    ids = await client.listModels({ timeoutMs });
  } catch (error) {
    if (!(error instanceof LlmRequestError)) throw error;
    const status = error.status;
    if (status === null) {
      const what = error.cause instanceof APIConnectionTimeoutError ? `did not answer within ${timeoutMs} ms` : `is unreachable (${describeCause(error.cause)})`;
      throw llmError(`The LLM endpoint ${settings.baseUrl} ${what}.`, `Start the model server or fix CODE_LLM_BASE_URL, ${off}.`, error);
    }
    if (status === 401 || status === 403) {
      throw llmError(`The LLM endpoint ${settings.baseUrl} rejected the credentials (HTTP ${status}).`, `Check CODE_LLM_API_KEY, ${off}.`, error);
    }
    if (status === 404) {
      throw llmError(
        `${settings.baseUrl} does not look like an OpenAI-compatible API (GET /models answered 404).`,
        `CODE_LLM_BASE_URL usually ends in /v1 (for example http://127.0.0.1:11434/v1 for Ollama), ${off}.`,
        error,
      );
    }
    throw llmError(`The LLM endpoint ${settings.baseUrl} is not working: ${error.message}`, `Check the model server, ${off}.`, error);
  }
  if (ids.length > 0 && !modelListed(settings.model, ids)) {
    const shown = ids.slice(0, 10).join(', ') + (ids.length > 10 ? `, ... (${ids.length} in all)` : '');
    throw llmError(`The model "${settings.model}" (${settings.modelFrom}) is not served by ${settings.baseUrl}.`, `Available models: ${shown}. Fix ${settings.modelFrom}, ${off}.`);
  }
}

/**
 * Throws a UserError (exit code 2 for configuration, 1 for an endpoint problem) when LLM enhancement is enabled
 * but cannot work: no model, a local model name without a base URL, no key for OpenAI, an unreachable or
 * non-OpenAI endpoint, rejected credentials, or a model the endpoint does not serve.
 */
export async function assertLlmReady(config: Config, options: { timeoutMs?: number } = {}): Promise<void> {
  if (!config.llm.enabled) return;
  const settings = resolveLlmSettings(config);
  const cacheKey = `${settings.baseUrl}\n${settings.model}\n${settings.apiKey}`;
  const last = recentSuccess.get(cacheKey);
  if (last !== undefined && Date.now() - last < SUCCESS_TTL_MS) return;
  await check(settings, options.timeoutMs ?? CHECK_TIMEOUT_MS);
  recentSuccess.set(cacheKey, Date.now());
}

/** Forgets earlier successful checks (tests, and `serve` after a configuration reload). */
export function resetLlmPreflightCache(): void {
  recentSuccess.clear();
}
