import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { ERROR_CODES, ERROR_CODE_NAMES, UserError, codesWithStatus, httpStatusOf } from '../../src/core/errors.js';
import { resetLlmPreflightCache } from '../../src/core/llm/preflight.js';
import { errorResponseDescription } from '../../src/daemon/errors.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { closedPort } from '../helpers/closed-port.js';

/**
 * One table maps each error code to its HTTP status and exit code (`ERROR_CODES`). REST, the MCP REST endpoint
 * and the OpenAPI document all answer from it, so a code has the same status whichever way it is reached.
 */

/** A port that refuses connections: bound, then closed. */
describe('the error code table', () => {
  it('gives every code exactly one HTTP error status and an exit code', () => {
    expect(new Set(ERROR_CODE_NAMES).size).toBe(ERROR_CODE_NAMES.length);
    for (const code of ERROR_CODE_NAMES) {
      const { status, exitCode } = ERROR_CODES[code];
      expect(Number.isInteger(status) && status >= 400 && status <= 599, code).toBe(true);
      expect(Number.isInteger(exitCode) && exitCode >= 1 && exitCode <= 255, code).toBe(true);
      expect(codesWithStatus(status), code).toContain(code);
      const error = new UserError('x', { code });
      expect([error.status, error.exitCode], code).toEqual([status, exitCode]);
      expect(httpStatusOf(code)).toBe(status);
    }
  });

  it('answers a missing dependency with 503: the database and the LLM endpoint alike', () => {
    expect(httpStatusOf('database_unavailable')).toBe(503);
    expect(httpStatusOf('llm_unavailable')).toBe(503);
    expect(new UserError('x', { code: 'database_unavailable' }).hint).toMatch(/docdex db status/);
  });
});

describe('the daemon answers every code with its one status', () => {
  let db: TestDatabase;
  let daemon: Awaited<ReturnType<typeof startTestDaemon>>;
  beforeAll(async () => {
    db = await createTestDatabase();
    const env = { ...db.env, CODE_ENABLE_LLM_EXTRACTION: 'true', CODE_LLM_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1`, CODE_LLM_EXTRACTION_MODEL: 'm' };
    daemon = await startTestDaemon(loadConfig(env), { routes: [...docsIndexRoutes, ...mcpRoutes] });
  });
  afterAll(async () => {
    await daemon?.close();
    await db?.drop();
  });

  const post = (route: string, body: unknown) => fetch(`${daemon.base}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('gives llm_unavailable the same status over REST and the MCP tool endpoint', async () => {
    const request = { start_urls: ['https://docs.example.com/'], name: 'example' };
    resetLlmPreflightCache();
    const rest = await post('/api/crawl-jobs', request);
    expect([rest.status, ((await rest.json()) as { code: string }).code]).toEqual([503, 'llm_unavailable']);
    resetLlmPreflightCache();
    const tool = await post('/mcp/execute/init_crawl', request);
    expect([tool.status, ((await tool.json()) as { code: string }).code]).toEqual([503, 'llm_unavailable']);
  });

  it('documents each error response in OpenAPI with the codes of its status, and every code in the Error schema', async () => {
    const spec = (await (await fetch(`${daemon.base}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses?: Record<string, { description: string; content?: Record<string, { schema?: { $ref?: string } }> }> }>>;
      components: { schemas: Record<string, { properties: { code: { enum: string[] } } }> };
    };
    expect(spec.components.schemas.Error!.properties.code.enum).toEqual(ERROR_CODE_NAMES);
    let checked = 0;
    for (const [path, operations] of Object.entries(spec.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          if (response.content?.['application/json']?.schema?.$ref !== '#/components/schemas/Error') continue;
          const where = `${method.toUpperCase()} ${path} ${status}`;
          expect(codesWithStatus(Number(status)).length, `${where}: no code answers with this status`).toBeGreaterThan(0);
          expect(response.description, where).toBe(errorResponseDescription(Number(status)));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
  });
});
