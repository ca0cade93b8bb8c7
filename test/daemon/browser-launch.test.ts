import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { crawlWorkerService } from '../../src/daemon/services.js';
import { describeWithBrowser } from '../helpers/browser.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import { percentile95, pollHealthUntil } from '../helpers/health.js';
import type { TestDatabase } from '../helpers/db.js';

// The daemon's own endpoints answer while its crawl worker starts Chromium and renders with it: the browser is
// loaded, launched and driven in a thread of its own. Loading Playwright alone held the event loop for 0.5 to
// 2.2 s on this machine (issue 48: /health took 2.56 s), during which /health did not answer. How long a stall
// lasts depends on the machine's load, and so does the latency of a daemon that does not stall: the bound is
// generous, and the test also checks the cause (Playwright is never loaded on the daemon's thread). The precise
// figures are in `npm run bench render` (the "/health while docdex serve starts the browser" row).

let db: TestDatabase;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;
let site: { base: string; close(): Promise<void> };

const SHELL = '<!doctype html><html><head><title>Loading</title></head><body><div id="root"></div><script src="/app.js"></script></body></html>';
const APP = `setTimeout(() => { document.getElementById('root').innerHTML = '<main><h1>Launch</h1><p>A page drawn by its script, a sentence of prose.</p><pre><code class="language-python">import launch</code></pre></main>'; }, 20);`;

describeWithBrowser('the daemon while its worker starts Chromium', () => {
  beforeAll(async () => {
    db = await createTestDatabase({ CRAWL_ALLOW_HOSTS: '127.0.0.1' });
    const server = createServer((req, res) => {
      if (req.url === '/app.js') return void res.writeHead(200, { 'content-type': 'application/javascript' }).end(APP);
      if (req.url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(SHELL);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    site = { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
    daemon = await startTestDaemon(db.config, { routes: docsIndexRoutes, services: [crawlWorkerService] });
  });

  afterAll(async () => {
    await daemon?.close();
    await site?.close();
    await db?.drop();
  });

  it('answers /health within 1 s throughout the first rendered crawl (browser load and launch included)', async () => {
    const res = await fetch(`${daemon.base}/api/crawl-jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ start_urls: [`${site.base}/`], max_depth: 0, name: 'launch', render: 'always' }),
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const job = async () => (await (await fetch(`${daemon.base}/api/crawl-jobs/${id}`)).json()) as { status: string; pages_rendered: number };
    const { latencies } = await pollHealthUntil(daemon.base, async () => ['completed', 'failed', 'cancelled'].includes((await job()).status));
    const max = Math.max(...latencies);
    console.log(`/health during the first render: ${latencies.length} samples, p95 ${percentile95(latencies).toFixed(1)} ms, max ${max.toFixed(1)} ms`);
    expect(await job()).toMatchObject({ status: 'completed', pages_rendered: 1 });
    // The page was rendered, and not by a Playwright on this thread: none of its modules is loaded here.
    const loadedHere = Object.keys(createRequire(import.meta.url).cache).filter((file) => file.includes('playwright-core'));
    expect(loadedHere).toEqual([]);
    // Generous: on a loaded 2-core machine the daemon shares the CPU with Chromium starting and other tests.
    expect(max).toBeLessThan(1000);
  }, 300_000);
});
