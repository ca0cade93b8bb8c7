import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/core/config.js';
import { UserError } from '../../src/core/errors.js';
import { assertLlmReady, resetLlmPreflightCache } from '../../src/core/llm/preflight.js';
import { resolveLlmSettings } from '../../src/core/llm/settings.js';
import { startStubServer } from './stub-server.js';
import type { StubServer } from './stub-server.js';
import { closedPort } from '../helpers/closed-port.js';

let stub: StubServer;
beforeAll(async () => {
  stub = await startStubServer();
});
afterAll(async () => {
  await stub.close();
});
beforeEach(() => {
  resetLlmPreflightCache();
  stub.models = ['stub-model', 'llama3.2:latest'];
  stub.modelsStatus = 200;
  stub.requests.length = 0;
});

const on = (env: Record<string, string>) => loadConfig({ CODE_ENABLE_LLM_EXTRACTION: 'true', ...env });

async function failure(promise: Promise<unknown>): Promise<UserError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UserError);
  return error as UserError;
}

/** A port that refuses connections: bound, then closed. */
describe('model resolution (CODE_LLM_EXTRACTION_MODEL vs CODE_LLM_EXTRACTION_MODE)', () => {
  it('MODEL wins when both are set', () => {
    const s = resolveLlmSettings(on({ CODE_LLM_BASE_URL: stub.baseUrl, CODE_LLM_EXTRACTION_MODEL: 'big', CODE_LLM_EXTRACTION_MODE: 'small' }));
    expect([s.model, s.modelFrom]).toEqual(['big', 'CODE_LLM_EXTRACTION_MODEL']);
  });

  it('MODE names the model of a local server when MODEL is unset', () => {
    const s = resolveLlmSettings(on({ CODE_LLM_BASE_URL: `${stub.baseUrl}/`, CODE_LLM_EXTRACTION_MODE: 'llama3.2' }));
    expect([s.model, s.modelFrom, s.baseUrl, s.customEndpoint]).toEqual(['llama3.2', 'CODE_LLM_EXTRACTION_MODE', stub.baseUrl, true]);
  });

  it('MODE without a base URL is a configuration error', () => {
    expect(() => resolveLlmSettings(on({ CODE_LLM_EXTRACTION_MODE: 'llama3.2', CODE_LLM_API_KEY: 'k' }))).toThrow(/CODE_LLM_BASE_URL is not set/);
  });

  it('OpenAI without a key is a configuration error; a local server needs none', () => {
    expect(() => resolveLlmSettings(on({ CODE_LLM_EXTRACTION_MODEL: 'gpt-4o-mini' }))).toThrow(/CODE_LLM_API_KEY/);
    expect(resolveLlmSettings(on({ CODE_LLM_EXTRACTION_MODEL: 'gpt-4o-mini', CODE_LLM_API_KEY: 'k' })).baseUrl).toBe('https://api.openai.com/v1');
  });

  it('reads the budget and concurrency knobs', () => {
    const c = on({ CODE_LLM_MAX_CONCURRENCY: '3', CODE_LLM_JOB_MAX_CALLS: '0', CODE_LLM_JOB_MAX_TOKENS: '5000', CODE_LLM_TIMEOUT_SECONDS: '30' });
    expect(c.llm).toMatchObject({ maxConcurrency: 3, jobMaxCalls: 0, jobMaxTokens: 5000, timeoutMs: 30_000 });
    expect(loadConfig({}).llm).toMatchObject({ enabled: false, maxConcurrency: 4, jobMaxCalls: 500, jobMaxTokens: 1_000_000, timeoutMs: 120_000 });
    expect(() => loadConfig({ CODE_LLM_MAX_CONCURRENCY: '0' })).toThrow(ConfigError);
  });
});

describe('assertLlmReady', () => {
  it('does nothing when enhancement is off, even with a broken endpoint', async () => {
    await assertLlmReady(loadConfig({ CODE_LLM_BASE_URL: 'http://127.0.0.1:1/v1' }));
  });

  it('fails with a clear message when enabled without a model', async () => {
    const error = await failure(assertLlmReady(on({ CODE_LLM_BASE_URL: stub.baseUrl })));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe('CODE_ENABLE_LLM_EXTRACTION is true but no model is configured.');
    expect(error.hint).toMatch(/CODE_LLM_EXTRACTION_MODEL/);
    expect(error.exitCode).toBe(2);
  });

  it('passes against a reachable endpoint serving the model (MODE, with Ollama-style :latest)', async () => {
    await assertLlmReady(on({ CODE_LLM_BASE_URL: stub.baseUrl, CODE_LLM_EXTRACTION_MODE: 'llama3.2' }));
    expect(stub.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/models']);
    // A second check within a minute reuses the answer.
    await assertLlmReady(on({ CODE_LLM_BASE_URL: stub.baseUrl, CODE_LLM_EXTRACTION_MODE: 'llama3.2' }));
    expect(stub.requests).toHaveLength(1);
  });

  it('fails when the endpoint is unreachable', async () => {
    const port = await closedPort();
    const error = await failure(assertLlmReady(on({ CODE_LLM_BASE_URL: `http://127.0.0.1:${port}/v1`, CODE_LLM_EXTRACTION_MODEL: 'm' })));
    expect(error.code).toBe('llm_unavailable');
    expect(error.message).toBe(`The LLM endpoint http://127.0.0.1:${port}/v1 is unreachable (ECONNREFUSED).`);
    expect(error.hint).toMatch(/CODE_ENABLE_LLM_EXTRACTION=false/);
  });

  it('fails when the endpoint does not answer in time', async () => {
    const server = http.createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const error = await failure(assertLlmReady(on({ CODE_LLM_BASE_URL: `http://127.0.0.1:${port}/v1`, CODE_LLM_EXTRACTION_MODEL: 'm' }), { timeoutMs: 200 }));
      expect(error.message).toBe(`The LLM endpoint http://127.0.0.1:${port}/v1 did not answer within 200 ms.`);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('fails when the model is not served, listing what is', async () => {
    const error = await failure(assertLlmReady(on({ CODE_LLM_BASE_URL: stub.baseUrl, CODE_LLM_EXTRACTION_MODEL: 'gpt-5' })));
    expect(error.message).toBe(`The model "gpt-5" (CODE_LLM_EXTRACTION_MODEL) is not served by ${stub.baseUrl}.`);
    expect(error.hint).toMatch(/^Available models: stub-model, llama3\.2:latest\./);
  });

  it('explains a rejected key and a base URL without /v1', async () => {
    stub.modelsStatus = 401;
    expect((await failure(assertLlmReady(on({ CODE_LLM_BASE_URL: stub.baseUrl, CODE_LLM_EXTRACTION_MODEL: 'stub-model' })))).message).toMatch(/rejected the credentials \(HTTP 401\)/);
    stub.modelsStatus = 200;
    const error = await failure(assertLlmReady(on({ CODE_LLM_BASE_URL: stub.baseUrl.replace(/\/v1$/, ''), CODE_LLM_EXTRACTION_MODEL: 'stub-model' })));
    expect(error.message).toMatch(/GET \/models answered 404/);
    expect(error.hint).toMatch(/ends in \/v1/);
  });
});
