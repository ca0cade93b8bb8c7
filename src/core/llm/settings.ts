import type { Config } from '../config.js';
import { ConfigError } from '../config.js';

/**
 * Which model at which endpoint, resolved once from the configuration. The rules (documented in docs/llm.md):
 * - CODE_LLM_EXTRACTION_MODEL names the model and wins whenever it is set.
 * - CODE_LLM_EXTRACTION_MODE is "the model name for a local LLM setup": it is used when MODEL is unset and
 *   CODE_LLM_BASE_URL points at your own server (Ollama, llama.cpp, vLLM). Without a base URL it would silently
 *   send a local model name to OpenAI, so that is a configuration error instead.
 * - Local servers often need no key; the SDK insists on one, so a placeholder is sent. Without a base URL the
 *   endpoint is OpenAI, which needs CODE_LLM_API_KEY.
 */

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
// Sent to servers that ignore the Authorization header; never a real credential.
export const PLACEHOLDER_API_KEY = 'docdex-no-key';

export interface LlmSettings {
  baseUrl: string;
  apiKey: string;
  model: string;
  /** Which variable named the model, for error messages. */
  modelFrom: 'CODE_LLM_EXTRACTION_MODEL' | 'CODE_LLM_EXTRACTION_MODE';
  /** True when CODE_LLM_BASE_URL is set (a self-hosted or third-party OpenAI-compatible server). */
  customEndpoint: boolean;
  maxConcurrency: number;
  jobMaxCalls: number;
  jobMaxTokens: number;
  timeoutMs: number;
}

/** Resolves the LLM settings; throws ConfigError (exit 2) when enhancement is enabled but cannot work. */
export function resolveLlmSettings(config: Config): LlmSettings {
  const llm = config.llm;
  const customEndpoint = llm.baseUrl !== undefined;
  let model: string | undefined;
  let modelFrom: LlmSettings['modelFrom'] = 'CODE_LLM_EXTRACTION_MODEL';
  if (llm.model !== undefined) {
    model = llm.model;
  } else if (llm.localModel !== undefined) {
    if (!customEndpoint) {
      throw new ConfigError(
        'CODE_LLM_EXTRACTION_MODE names a model for a local LLM server, but CODE_LLM_BASE_URL is not set.',
        'Set CODE_LLM_BASE_URL to your server (for example http://127.0.0.1:11434/v1 for Ollama), or set CODE_LLM_EXTRACTION_MODEL for a hosted model.',
      );
    }
    model = llm.localModel;
    modelFrom = 'CODE_LLM_EXTRACTION_MODE';
  }
  if (model === undefined) {
    throw new ConfigError(
      'CODE_ENABLE_LLM_EXTRACTION is true but no model is configured.',
      'Set CODE_LLM_EXTRACTION_MODEL (or CODE_LLM_EXTRACTION_MODE with CODE_LLM_BASE_URL for a local server), or set CODE_ENABLE_LLM_EXTRACTION=false.',
    );
  }
  if (!customEndpoint && llm.apiKey === undefined) {
    throw new ConfigError(
      'CODE_ENABLE_LLM_EXTRACTION is true but CODE_LLM_API_KEY is not set for the default OpenAI endpoint.',
      'Set CODE_LLM_API_KEY, or point CODE_LLM_BASE_URL at a local OpenAI-compatible server.',
    );
  }
  return {
    baseUrl: (llm.baseUrl ?? OPENAI_BASE_URL).replace(/\/+$/, ''),
    apiKey: llm.apiKey ?? PLACEHOLDER_API_KEY,
    model,
    modelFrom,
    customEndpoint,
    maxConcurrency: llm.maxConcurrency,
    jobMaxCalls: llm.jobMaxCalls,
    jobMaxTokens: llm.jobMaxTokens,
    timeoutMs: llm.timeoutMs,
  };
}
