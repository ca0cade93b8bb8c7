import OpenAI from 'openai';
import type { APIError } from 'openai';
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { LlmSettings } from './settings.js';

/**
 * The one door to the model: the openai SDK pointed at any OpenAI-compatible endpoint, with docdex's own
 * retries (the SDK's are off, so Retry-After is honoured exactly and the waits are observable in tests) and a
 * per-process cap on simultaneous requests.
 */

export type StructuredMode = 'json_schema' | 'json_object';

export interface ChatRequest {
  messages: ChatCompletionMessageParam[];
  /** JSON schema for `response_format`; servers without json_schema support get json_object instead. */
  schema: { name: string; schema: Record<string, unknown> };
  maxOutputTokens: number;
}

export interface ChatResult {
  content: string;
  finishReason: string | null;
  /** From the response's usage; null when the server reports none (some local servers). */
  usage: { promptTokens: number; completionTokens: number; totalTokens: number } | null;
}

export interface RetryInfo {
  attempt: number;
  delayMs: number;
  status: number | null;
  /** True when the delay came from Retry-After / retry-after-ms rather than our backoff. */
  fromRetryAfter: boolean;
}

export interface LlmClientOptions {
  /** Total HTTP attempts per request for 429, 5xx, timeouts and connection errors. */
  maxAttempts?: number;
  /** First backoff step; doubles per attempt, with full jitter. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /**
   * A Retry-After longer than this is not slept through in-process: the request fails with retryAfterMs set so
   * the queue can reschedule the job instead of holding a worker for minutes.
   */
  maxRetryAfterMs?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  onRetry?: (info: RetryInfo) => void;
}

export class LlmRequestError extends Error {
  override readonly name = 'LlmRequestError';
  constructor(
    message: string,
    readonly details: { status: number | null; retryable: boolean; retryAfterMs?: number; cause?: unknown },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
  }
  get status(): number | null {
    return this.details.status;
  }
  get retryable(): boolean {
    return this.details.retryable;
  }
  get retryAfterMs(): number | undefined {
    return this.details.retryAfterMs;
  }
}

/** A counting semaphore: at most `limit` holders at a time, served in arrival order. */
export class Semaphore {
  #active = 0;
  readonly #waiting: Array<() => void> = [];
  constructor(readonly limit: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#active >= this.limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#active++;
    try {
      return await fn();
    } finally {
      const next = this.#waiting.shift();
      // The slot passes straight to the next waiter, so a newcomer cannot overtake it.
      if (next) next();
      else this.#active--;
    }
  }

  get active(): number {
    return this.#active;
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Milliseconds the server asked us to wait: `retry-after-ms` (OpenAI's precise form) first, then `Retry-After`
 * as delta-seconds or an HTTP date. Undefined when absent or unparseable.
 */
export function parseRetryAfter(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return Math.ceil(n);
  }
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 408 || status >= 500;
}

/** Servers without json_schema support answer 400 naming the parameter; they get json_object from then on. */
function rejectsJsonSchema(error: APIError): boolean {
  if (error.status !== 400 && error.status !== 422) return false;
  return /response_format|json_schema|structured/i.test(error.message);
}

export class LlmClient {
  readonly model: string;
  readonly semaphore: Semaphore;
  #mode: StructuredMode = 'json_schema';
  readonly #sdk: OpenAI;
  readonly #options: Required<Omit<LlmClientOptions, 'onRetry'>> & Pick<LlmClientOptions, 'onRetry'>;
  readonly #settings: LlmSettings;

  constructor(settings: LlmSettings, options: LlmClientOptions = {}) {
    this.#settings = settings;
    this.model = settings.model;
    this.semaphore = new Semaphore(settings.maxConcurrency);
    this.#options = {
      maxAttempts: options.maxAttempts ?? 5,
      baseDelayMs: options.baseDelayMs ?? 500,
      maxDelayMs: options.maxDelayMs ?? 30_000,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 120_000,
      sleep: options.sleep ?? sleep,
      random: options.random ?? Math.random,
      ...(options.onRetry === undefined ? {} : { onRetry: options.onRetry }),
    };
    // Everything explicit: the SDK would otherwise read OPENAI_* variables, and docdex reads settings only
    // through loadConfig().
    this.#sdk = new OpenAI({
      apiKey: settings.apiKey,
      baseURL: settings.baseUrl,
      organization: null,
      project: null,
      maxRetries: 0,
      timeout: settings.timeoutMs,
    });
  }

  get structuredMode(): StructuredMode {
    return this.#mode;
  }

  /** One chat completion with structured output, retried on 429/5xx/timeouts. */
  async complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult> {
    const { maxAttempts } = this.#options;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.semaphore.run(() => this.#send(request, signal));
      } catch (error) {
        if (signal?.aborted) throw error;
        if (error instanceof OpenAI.APIError && this.#mode === 'json_schema' && rejectsJsonSchema(error)) {
          this.#mode = 'json_object';
          attempt--;
          continue;
        }
        const failure = this.#classify(error);
        if (!failure.retryable || attempt >= maxAttempts) throw failure;
        const retryAfter = failure.retryAfterMs;
        if (retryAfter !== undefined && retryAfter > this.#options.maxRetryAfterMs) throw failure;
        const delayMs = retryAfter ?? this.#backoff(attempt);
        this.#options.onRetry?.({ attempt, delayMs, status: failure.status, fromRetryAfter: retryAfter !== undefined });
        await this.#options.sleep(delayMs, signal);
      }
    }
  }

  /** Model ids the endpoint lists (GET /models), for the preflight check. */
  async listModels(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<string[]> {
    try {
      const page = await this.#sdk.models.list({
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
      });
      return page.data.map((m) => m.id);
    } catch (error) {
      throw this.#classify(error, options.timeoutMs);
    }
  }

  #backoff(attempt: number): number {
    const ceiling = Math.min(this.#options.maxDelayMs, this.#options.baseDelayMs * 2 ** (attempt - 1));
    // Full jitter: concurrent workers that failed together do not retry together.
    return Math.round(ceiling / 2 + (ceiling / 2) * this.#options.random());
  }

  async #send(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult> {
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: this.model,
      messages: request.messages,
      response_format: this.#mode === 'json_schema' ? { type: 'json_schema', json_schema: { name: request.schema.name, schema: request.schema.schema, strict: true } } : { type: 'json_object' },
      // OpenAI's current models reject max_tokens; many local servers only know max_tokens.
      ...(this.#settings.customEndpoint ? { max_tokens: request.maxOutputTokens, temperature: 0 } : { max_completion_tokens: request.maxOutputTokens }),
    };
    const response = await this.#sdk.chat.completions.create(body, signal === undefined ? undefined : { signal });
    const choice = response.choices[0];
    const usage = response.usage ? { promptTokens: response.usage.prompt_tokens, completionTokens: response.usage.completion_tokens, totalTokens: response.usage.total_tokens } : null;
    return { content: choice?.message.content ?? '', finishReason: choice?.finish_reason ?? null, usage };
  }

  #classify(error: unknown, timeoutMs = this.#settings.timeoutMs): LlmRequestError {
    if (error instanceof LlmRequestError) return error;
    if (error instanceof OpenAI.APIConnectionError) {
      const timeout = error instanceof OpenAI.APIConnectionTimeoutError;
      return new LlmRequestError(timeout ? `${this.#settings.baseUrl} did not answer within ${timeoutMs} ms.` : `Cannot reach ${this.#settings.baseUrl}: ${describeCause(error)}.`, {
        status: null,
        retryable: true,
        cause: error,
      });
    }
    if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
      const retryAfterMs = parseRetryAfter(error.headers);
      return new LlmRequestError(`The model endpoint answered ${error.status}: ${error.message}`, {
        status: error.status,
        retryable: isRetryableStatus(error.status),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        cause: error,
      });
    }
    return new LlmRequestError(`LLM request failed: ${(error as Error)?.message ?? String(error)}`, { status: null, retryable: false, cause: error });
  }
}

export function describeCause(error: unknown): string {
  let current: unknown = error;
  let message = (error as Error)?.message ?? String(error);
  // fetch wraps the socket error (ECONNREFUSED, ENOTFOUND) a few causes deep.
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    if (current.message && current.message !== 'Connection error.') message = current.message;
    current = current.cause;
  }
  return message;
}
