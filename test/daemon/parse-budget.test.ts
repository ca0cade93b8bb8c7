import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { crawlWorkerService, uploadWorkerService } from '../../src/daemon/services.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { percentile95, pollHealthUntil } from '../helpers/health.js';

// The daemon's own endpoints answer while the worst document it can be given is being extracted: the
// extraction runs in worker threads, not on the thread that answers requests. The worst markdown is one
// long list whose items each hold a nested list (micromark's slowest shape per byte), plus list markers
// nested by indentation; before the extraction pool, /health waited for the whole parse.

let db: TestDatabase;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;
let site: { base: string; close(): Promise<void> };

/** About `bytes` of the slowest markdown per byte we know. */
function worstMarkdown(bytes: number): string {
  const deep = Array.from({ length: 200 }, (_, d) => `${'  '.repeat(d)}- level ${d}`).join('\n');
  const unit = '- item one\n  - nested item\n\n';
  return `# Worst\n\n${deep}\n\n${unit.repeat(Math.ceil(bytes / unit.length))}`;
}

const WORST = worstMarkdown(1_000_000);

beforeAll(async () => {
  // A budget long enough that the slow document is still being extracted while /health is polled.
  db = await createTestDatabase({ CRAWL_ALLOW_HOSTS: '127.0.0.1', EXTRACT_TIMEOUT_SECONDS: '600' });
  const server = createServer((req, res) => {
    if (req.url === '/worst.md') {
      res.writeHead(200, { 'content-type': 'text/markdown' }).end(WORST);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  site = {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  daemon = await startTestDaemon(db.config, { routes: docsIndexRoutes, services: [crawlWorkerService, uploadWorkerService] });
});

afterAll(async () => {
  await daemon?.close();
  await site?.close();
  await db?.drop();
});

async function getJson(path: string): Promise<any> {
  const res = await fetch(`${daemon.base}${path}`);
  return res.json();
}

describe('the daemon while the worst input is parsed', () => {
  it('answers /health within 100 ms (95th percentile) while an uploaded file is extracted', async () => {
    const form = new FormData();
    form.append('file', new Blob([WORST], { type: 'text/markdown' }), 'worst.md');
    form.append('source_url', 'https://worst.example.test/worst.md');
    const upload = await fetch(`${daemon.base}/upload/file`, { method: 'POST', body: form });
    expect(upload.status).toBe(202);
    const { id } = (await upload.json()) as { id: string };
    const { polls, latencies } = await pollHealthUntil(daemon.base, async () => ['completed', 'failed'].includes((await getJson(`/upload/status/${id}`)).status));
    console.log(`upload: ${polls} polls, p95 ${percentile95(latencies).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`);
    expect(polls).toBeGreaterThanOrEqual(20);
    expect(percentile95(latencies)).toBeLessThan(100);
    expect((await getJson(`/upload/status/${id}`)).status).toBe('completed');
  }, 600_000);

  it('answers /health within 100 ms (95th percentile) while a crawled page is extracted', async () => {
    const res = await fetch(`${daemon.base}/api/crawl-jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ start_urls: [`${site.base}/worst.md`], max_depth: 0, name: 'worst' }),
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const { polls, latencies } = await pollHealthUntil(daemon.base, async () => ['completed', 'failed', 'cancelled'].includes((await getJson(`/api/crawl-jobs/${id}`)).status));
    console.log(`crawl: ${polls} polls, p95 ${percentile95(latencies).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`);
    expect(polls).toBeGreaterThanOrEqual(20);
    expect(percentile95(latencies)).toBeLessThan(100);
    expect((await getJson(`/api/crawl-jobs/${id}`)).status).toBe('completed');
  }, 600_000);
});
