import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { crawlWorkerService } from '../../src/daemon/services.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { generatedSite, serveSite } from '../helpers/site.js';

let db: TestDatabase;
const ALPHA = 'alpha-token-of-at-least-32-characters';
const BETA = 'beta-token-of-at-least-32-characters-';
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

describe('authentication on every protected route', () => {
  it('answers 401 without a token on every documented route except health and docs, and accepts each token', async () => {
    const config = loadConfig({ ...db.env, MCP_AUTH_ENABLED: 'true', MCP_AUTH_TOKENS: `${ALPHA},${BETA}`, API_AUTH: 'true' });
    const daemon = await startTestDaemon(config, { routes: [...docsIndexRoutes, ...mcpRoutes] });
    try {
      const spec = (await (await fetch(`${daemon.base}/openapi.json`)).json()) as any;
      const routes: Array<[string, string]> = [];
      for (const [path, methods] of Object.entries(spec.paths as Record<string, Record<string, unknown>>)) {
        for (const method of Object.keys(methods)) routes.push([method.toUpperCase(), path.replace(/\{[^}]+\}/g, '00000000-0000-0000-0000-000000000000')]);
      }
      // The MCP endpoints are protected too, though they are not REST resources in the document.
      routes.push(['POST', '/mcp'], ['GET', '/mcp/v1/sse'], ['GET', '/mcp/tools'], ['POST', '/mcp/execute/search_libraries']);
      expect(routes.length).toBeGreaterThan(20);
      for (const [method, path] of routes) {
        const res = await fetch(`${daemon.base}${path}`, { method, ...(method === 'GET' ? {} : { headers: { 'content-type': 'application/json' }, body: '{}' }) });
        if (path === '/health') {
          expect(res.status, `${method} ${path}`).toBe(200);
          continue;
        }
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(res.headers.get('www-authenticate'), path).toMatch(/^Bearer/);
        expect(await res.json()).toMatchObject({ code: 'unauthorized' });
      }
      for (const token of [ALPHA, BETA]) {
        const ok = await fetch(`${daemon.base}/api/sources`, { headers: { Authorization: `Bearer ${token}` } });
        expect(ok.status).toBe(200);
        const tools = await fetch(`${daemon.base}/mcp/tools`, { headers: { Authorization: `Bearer ${token}` } });
        expect(tools.status).toBe(200);
      }
    } finally {
      await daemon.close();
    }
  });
});

describe('graceful shutdown', () => {
  it('stops mid-crawl without losing pages, and a resumed job completes with every page stored once', async () => {
    const site = await serveSite(generatedSite(12), { delayMs: 150 });
    try {
      const first = await startTestDaemon(db.config, { routes: docsIndexRoutes, services: [crawlWorkerService] });
      const created = (await (
        await fetch(`${first.base}/api/crawl-jobs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ start_urls: [`${site.base}/`], name: 'shutdown-lib', max_depth: 1, max_concurrent_crawls: 1 }),
        })
      ).json()) as any;
      const jobId = created.job_id as string;
      await expect.poll(async () => (await db.pool.query('SELECT pages_crawled FROM crawl_jobs WHERE id = $1', [jobId])).rows[0].pages_crawled, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
      await first.close();
      const afterStop = (await db.pool.query('SELECT status, pages_crawled FROM crawl_jobs WHERE id = $1', [jobId])).rows[0];
      expect(afterStop.pages_crawled).toBeLessThan(13);

      const second = await startTestDaemon(db.config, { routes: docsIndexRoutes, services: [crawlWorkerService] });
      try {
        if (afterStop.status !== 'completed') {
          const resumed = await fetch(`${second.base}/api/crawl-jobs/${jobId}/resume`, { method: 'POST' });
          // A job whose controller handed it back is still "running" and is adopted by the new daemon's
          // workers; resume then answers 409 (nothing to resume) or 202.
          expect([202, 409]).toContain(resumed.status);
        }
        await expect.poll(async () => (await db.pool.query('SELECT status FROM crawl_jobs WHERE id = $1', [jobId])).rows[0].status, { timeout: 60_000 }).toBe('completed');
      } finally {
        await second.close();
      }
      const docs = await db.pool.query<{ url: string; n: number }>('SELECT url, count(*)::int AS n FROM documents GROUP BY url');
      expect(docs.rows).toHaveLength(13);
      expect(docs.rows.every((r) => r.n === 1)).toBe(true);
      expect((await db.pool.query("SELECT count(*)::int AS n FROM snippets WHERE kind = 'snippet'")).rows[0].n).toBe(25);
    } finally {
      await site.close();
    }
  });
});
