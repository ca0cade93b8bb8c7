import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { loadConfig } from '../../src/core/config.js';
import { publish } from '../../src/core/events/notify.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

/** The OpenAPI job schemas, and a crawl job in its LLM stage (written straight into the database) through the REST job endpoints. */
async function expectEnhancingJobServed(base: string): Promise<void> {
  // A job with LLM enhancement on reads enhancing between its pages and completed.
  const spec = (await (await fetch(`${base}/openapi.json`)).json()) as any;
  expect(spec.components.schemas.CrawlJob.properties.status.enum).toEqual(['queued', 'running', 'enhancing', 'completed', 'failed', 'cancelled']);
  expect(spec.components.schemas.UploadJob.properties.status.enum).toEqual(['queued', 'processing', 'enhancing', 'completed', 'failed', 'cancelled']);
  expect(spec.components.schemas.CrawlJob.required).toEqual(expect.arrayContaining(['llm_pages_total', 'llm_pages_done', 'llm_pages_failed']));
  const source = await db.pool.query<{ id: string }>(`INSERT INTO sources (name) VALUES ('enhancing-docs') RETURNING id`);
  const job = await db.pool.query<{ id: string }>(
    `INSERT INTO crawl_jobs (source_id, name, status, start_urls, llm_enhance) VALUES ($1, 'enhancing-docs', 'enhancing', ARRAY['https://x.test/'], true) RETURNING id`,
    [source.rows[0]!.id],
  );
  const jobId = job.rows[0]!.id;
  const one = await fetch(`${base}/api/crawl-jobs/${jobId}`);
  expect(one.status).toBe(200);
  expect(await one.json()).toMatchObject({ job_id: jobId, status: 'enhancing', llm_enhance: true, llm_pages_total: 0, llm_pages_done: 0, llm_pages_failed: 0 });
  const list = (await (await fetch(`${base}/api/crawl-jobs?status=enhancing`)).json()) as { items: Array<{ job_id: string }> };
  expect(list.items.map((j) => j.job_id)).toEqual([jobId]);
}

describe('daemon basics (auth off)', () => {
  let daemon: Awaited<ReturnType<typeof startTestDaemon>>;
  beforeAll(async () => {
    daemon = await startTestDaemon(loadConfig({ ...db.env, API_CORS_ORIGINS: 'http://app.example' }), { routes: docsIndexRoutes });
  });
  afterAll(async () => {
    await daemon.close();
  });

  it('reports health with database, migrations and queue', async () => {
    const res = await fetch(`${daemon.base}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ status: 'ok', database: { reachable: true }, queue: { depth: 0 } });
    expect(body.migrations.current).toBe(body.migrations.latest);
    expect(res.headers.get('x-request-id')).toMatch(/[0-9a-f-]{36}/);
  });

  it('uses the one error format for unknown routes, bad ids and malformed JSON', async () => {
    const unknown = await fetch(`${daemon.base}/nope`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'No route GET /nope', code: 'not_found', details: [] });
    const missing = await fetch(`${daemon.base}/snippets/999999`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'not_found' });
    const bad = await fetch(`${daemon.base}/snippets/abc`);
    expect(bad.status).toBe(422);
    expect(await bad.json()).toMatchObject({ code: 'validation_error' });
  });

  it('serves an OpenAPI document that validates, Swagger UI at /docs and an offline Redoc at /redoc', async () => {
    const spec = (await (await fetch(`${daemon.base}/openapi.json`)).json()) as any;
    await SwaggerParser.validate(structuredClone(spec));
    expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(['/health', '/snippets/{id}', '/api/statistics/dashboard']));
    const docs = await fetch(`${daemon.base}/docs/`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger');
    const redoc = await (await fetch(`${daemon.base}/redoc`)).text();
    expect(redoc).toContain('/redoc/redoc.standalone.js');
    expect(redoc).not.toMatch(/https?:\/\/(cdn|unpkg)/);
    const script = await fetch(`${daemon.base}/redoc/redoc.standalone.js`);
    expect(script.status).toBe(200);
    expect((await script.text()).length).toBeGreaterThan(100_000);
  });

  it('serves a job in its enhancing stage through the job endpoints', () => expectEnhancingJobServed(daemon.base));

  it('answers CORS preflight for configured origins only', async () => {
    const ok = await fetch(`${daemon.base}/api/statistics/dashboard`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://app.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization' },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe('http://app.example');
    const other = await fetch(`${daemon.base}/api/statistics/dashboard`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'GET' },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('relays NOTIFY job events to WebSocket subscribers, filtered by job', async () => {
    const ws = new WebSocket(`${daemon.base.replace('http', 'ws')}/ws`);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const received: Array<Record<string, unknown>> = [];
    ws.on('message', (m) => received.push(JSON.parse(String(m))));
    ws.send(JSON.stringify({ type: 'subscribe', job_id: 'job-a' }));
    await expect.poll(() => received.some((m) => m.type === 'subscribed')).toBe(true);
    await publish(db.pool, { event: 'crawl_progress', jobId: 'job-b', kind: 'crawl', state: 'running', counters: { pages_crawled: 1 } });
    await publish(db.pool, { event: 'crawl_progress', jobId: 'job-a', kind: 'crawl', state: 'running', counters: { pages_crawled: 2 }, rate: 1.5 });
    await publish(db.pool, { event: 'job_complete', jobId: 'job-a', kind: 'crawl', state: 'completed', counters: { pages_crawled: 3 } });
    await expect.poll(() => received.filter((m) => m.job_id === 'job-a').length, { timeout: 5000 }).toBe(2);
    expect(received.some((m) => m.job_id === 'job-b')).toBe(false);
    const progress = received.find((m) => m.type === 'crawl_progress')!;
    expect(progress).toMatchObject({ job_id: 'job-a', kind: 'crawl', state: 'running', counters: { pages_crawled: 2 }, rate: 1.5 });
    expect(typeof progress.timestamp).toBe('string');
    expect(received.find((m) => m.type === 'job_complete')).toMatchObject({ state: 'completed' });
    ws.close();
  });
});

describe('daemon with authentication', () => {
  it('refuses to start when auth is enabled without a token', async () => {
    await expect(startTestDaemon(loadConfig({ ...db.env, MCP_AUTH_ENABLED: 'true' }), { routes: docsIndexRoutes })).rejects.toThrow(/no token/);
  });

  it('requires a bearer token on REST and WebSocket when API auth is on, keeping health and docs public', async () => {
    const daemon = await startTestDaemon(
      loadConfig({ ...db.env, MCP_AUTH_ENABLED: 'true', MCP_AUTH_TOKEN: 'tok-one'.padEnd(32, '-'), MCP_AUTH_TOKENS: `${'tok-two'.padEnd(32, '-')},${'tok-three'.padEnd(32, '-')}`, API_AUTH: 'true' }),
      {
        routes: docsIndexRoutes,
      },
    );
    try {
      for (const header of [undefined, 'Bearer wrong', 'Basic dG9rLW9uZQ==', 'Bearer']) {
        const res = await fetch(`${daemon.base}/api/statistics/dashboard`, { headers: header ? { Authorization: header } : {} });
        expect(res.status, String(header)).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(await res.json()).toMatchObject({ code: 'unauthorized', details: [] });
      }
      for (const token of ['tok-one', 'tok-two', 'tok-three'].map((t) => t.padEnd(32, '-'))) {
        const res = await fetch(`${daemon.base}/api/statistics/dashboard`, { headers: { Authorization: `Bearer ${token}` } });
        expect(res.status, token).toBe(200);
      }
      expect((await fetch(`${daemon.base}/health`)).status).toBe(200);
      expect((await fetch(`${daemon.base}/openapi.json`)).status).toBe(200);
      expect((await fetch(`${daemon.base}/redoc`)).status).toBe(200);
      const refused = new WebSocket(`${daemon.base.replace('http', 'ws')}/ws`);
      const status = await new Promise<number>((resolve) => refused.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
      expect(status).toBe(401);
      const accepted = new WebSocket(`${daemon.base.replace('http', 'ws')}/ws`, { headers: { Authorization: `Bearer ${'tok-two'.padEnd(32, '-')}` } });
      await new Promise((resolve, reject) => accepted.once('open', resolve).once('error', reject));
      accepted.close();
    } finally {
      await daemon.close();
    }
  });
});
