import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { LlmClient, LlmRequestError, parseRetryAfter } from '../../src/core/llm/client.js';
import type { ChatRequest, RetryInfo } from '../../src/core/llm/client.js';
import { PLACEHOLDER_API_KEY, resolveLlmSettings } from '../../src/core/llm/settings.js';
import type { LlmSettings } from '../../src/core/llm/settings.js';
import { startStubServer } from './stub-server.js';
import type { StubServer } from './stub-server.js';

let stub: StubServer;
beforeAll(async () => {
  stub = await startStubServer();
});
afterAll(async () => {
  await stub.close();
});
beforeEach(() => {
  stub.requests.length = 0;
  stub.maxInFlight = 0;
});

function settings(overrides: Record<string, string> = {}): LlmSettings {
  return resolveLlmSettings(loadConfig({ CODE_ENABLE_LLM_EXTRACTION: 'true', CODE_LLM_BASE_URL: stub.baseUrl, CODE_LLM_EXTRACTION_MODEL: 'stub-model', ...overrides }));
}

const request: ChatRequest = {
  messages: [
    { role: 'system', content: 'answer' },
    { role: 'user', content: 'hello' },
  ],
  schema: { name: 'test', schema: { type: 'object', additionalProperties: false, required: [], properties: {} } },
  maxOutputTokens: 50,
};

/** Records the waits the client asks for instead of sleeping through them. */
function recordingSleep(): { waits: number[]; sleep: (ms: number) => Promise<void> } {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}

describe('LlmClient against an OpenAI-compatible stub', () => {
  it('sends structured-output requests with a placeholder key when a local server needs none', async () => {
    const client = new LlmClient(settings());
    stub.script({ content: '{"ok":true}', usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 } });
    const result = await client.complete(request);
    expect(result).toEqual({ content: '{"ok":true}', finishReason: 'stop', usage: { promptTokens: 11, completionTokens: 3, totalTokens: 14 } });
    const sent = stub.chatRequests()[0]!;
    expect(sent.headers.authorization).toBe(`Bearer ${PLACEHOLDER_API_KEY}`);
    expect(sent.body?.model).toBe('stub-model');
    expect(sent.body?.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'test', strict: true, schema: request.schema.schema } });
    // A custom endpoint gets max_tokens and temperature 0; OpenAI itself gets max_completion_tokens.
    expect(sent.body?.max_tokens).toBe(50);
    expect(sent.body?.temperature).toBe(0);
  });

  it('sends the configured key', async () => {
    const client = new LlmClient(settings({ CODE_LLM_API_KEY: 'sk-test-123' }));
    await client.complete(request);
    expect(stub.chatRequests()[0]!.headers.authorization).toBe('Bearer sk-test-123');
  });

  it('honours Retry-After exactly on 429, then succeeds', async () => {
    const { waits, sleep } = recordingSleep();
    const retries: RetryInfo[] = [];
    const client = new LlmClient(settings(), { sleep, onRetry: (r) => retries.push(r) });
    stub.script({ status: 429, headers: { 'retry-after': '7' } }, { status: 429, headers: { 'retry-after-ms': '1250' } }, { content: '{}' });
    const result = await client.complete(request);
    expect(result.content).toBe('{}');
    expect(stub.chatRequests()).toHaveLength(3);
    expect(waits).toEqual([7000, 1250]);
    expect(retries.map((r) => [r.status, r.fromRetryAfter])).toEqual([
      [429, true],
      [429, true],
    ]);
  });

  it('really waits for Retry-After before the next request', async () => {
    const client = new LlmClient(settings());
    stub.script({ status: 429, headers: { 'retry-after': '1' } }, { content: '{}' });
    await client.complete(request);
    const [first, second] = stub.chatRequests();
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(1000);
  });

  it('backs off exponentially on 5xx without Retry-After', async () => {
    const { waits, sleep } = recordingSleep();
    const client = new LlmClient(settings(), { sleep, random: () => 1, baseDelayMs: 100 });
    stub.script({ status: 500 }, { status: 502 }, { status: 503 }, { content: '{}' });
    await client.complete(request);
    expect(waits).toEqual([100, 200, 400]);
  });

  it('gives up after maxAttempts with a retryable error', async () => {
    const { waits, sleep } = recordingSleep();
    const client = new LlmClient(settings(), { sleep, maxAttempts: 3 });
    stub.script({ status: 500 }, { status: 500 }, { status: 500 });
    const error = await client.complete(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRequestError);
    expect((error as LlmRequestError).status).toBe(500);
    expect((error as LlmRequestError).retryable).toBe(true);
    expect(stub.chatRequests()).toHaveLength(3);
    expect(waits).toHaveLength(2);
  });

  it('does not sleep through a Retry-After beyond its limit: the queue reschedules instead', async () => {
    const { waits, sleep } = recordingSleep();
    const client = new LlmClient(settings(), { sleep, maxRetryAfterMs: 60_000 });
    stub.script({ status: 429, headers: { 'retry-after': '3600' } });
    const error = (await client.complete(request).catch((e: unknown) => e)) as LlmRequestError;
    expect(error.retryAfterMs).toBe(3_600_000);
    expect(error.retryable).toBe(true);
    expect(waits).toEqual([]);
    expect(stub.chatRequests()).toHaveLength(1);
  });

  it('does not retry a 400 or 401', async () => {
    const client = new LlmClient(settings(), { sleep: async () => undefined });
    stub.script({ status: 401, body: { error: { message: 'bad key', type: 'invalid_request_error' } } });
    const error = (await client.complete(request).catch((e: unknown) => e)) as LlmRequestError;
    expect(error.status).toBe(401);
    expect(error.retryable).toBe(false);
    expect(stub.chatRequests()).toHaveLength(1);
  });

  it('falls back to json_object when the server rejects json_schema', async () => {
    const client = new LlmClient(settings());
    stub.script({ status: 400, body: { error: { message: "Invalid value for 'response_format': json_schema is not supported", type: 'invalid_request_error' } } }, { content: '{}' });
    await client.complete(request);
    const [first, second] = stub.chatRequests();
    expect(first!.body?.response_format?.type).toBe('json_schema');
    expect(second!.body?.response_format).toEqual({ type: 'json_object' });
    expect(client.structuredMode).toBe('json_object');
  });

  it('retries a timeout, then reports it as retryable', async () => {
    const client = new LlmClient({ ...settings(), timeoutMs: 300 }, { sleep: async () => undefined, maxAttempts: 2 });
    stub.script({ content: '{}', delayMs: 2000 }, { content: '{}', delayMs: 2000 });
    const error = (await client.complete(request).catch((e: unknown) => e)) as LlmRequestError;
    expect(error).toBeInstanceOf(LlmRequestError);
    expect(error.status).toBeNull();
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/did not answer within 300 ms/);
    expect(stub.chatRequests()).toHaveLength(2);
  });

  it('keeps at most CODE_LLM_MAX_CONCURRENCY requests in flight', async () => {
    const client = new LlmClient(settings({ CODE_LLM_MAX_CONCURRENCY: '2' }));
    stub.setDefault(() => ({ content: '{}', delayMs: 150 }));
    try {
      await Promise.all(Array.from({ length: 6 }, () => client.complete(request)));
    } finally {
      stub.setDefault(() => ({ content: '{}' }));
    }
    expect(stub.chatRequests()).toHaveLength(6);
    expect(stub.maxInFlight).toBe(2);
  });

  it('lists models', async () => {
    stub.models = ['a', 'stub-model'];
    expect(await new LlmClient(settings()).listModels()).toEqual(['a', 'stub-model']);
    stub.models = ['stub-model'];
  });
});

describe('parseRetryAfter', () => {
  const h = (o: Record<string, string>) => new Headers(o);
  it('reads seconds, milliseconds and HTTP dates', () => {
    expect(parseRetryAfter(h({ 'retry-after': '2' }))).toBe(2000);
    expect(parseRetryAfter(h({ 'retry-after': '0.5' }))).toBe(500);
    expect(parseRetryAfter(h({ 'retry-after-ms': '1500', 'retry-after': '9' }))).toBe(1500);
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter(h({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' }), now)).toBe(5000);
    expect(parseRetryAfter(h({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(parseRetryAfter(h({}))).toBeUndefined();
  });
});
