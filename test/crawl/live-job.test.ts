import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { progressLine, summaryLine } from '../../src/cli/crawl-follow.js';
import type { CrawlJob } from '../../src/core/crawl/index.js';
import { fromCrawlJob } from '../../src/ui/job-view.js';
import { renderLiveJob } from '../../src/ui/live-job.js';

/** A terminal that records what Ink writes. */
class FakeTerminal extends EventEmitter {
  columns = 100;
  rows = 30;
  isTTY = true;
  output = '';
  write(chunk: string): boolean {
    this.output += chunk;
    return true;
  }
}

const base: CrawlJob = {
  job_id: '3f2a9c1e-0000-4000-8000-000000000001',
  id: '3f2a9c1e-0000-4000-8000-000000000001',
  status: 'running',
  name: 'Widget Docs',
  version: '',
  source_id: 's',
  start_urls: ['https://x.org/'],
  max_depth: 1,
  domain_filter: null,
  url_patterns: [],
  exclude_patterns: [],
  max_concurrent_crawls: 3,
  use_sitemap: false,
  metadata: {},
  max_pages: 10_000,
  page_cap_reached: false,
  links_ignored: 0,
  prefer_markdown: 'auto',
  routes: { html: 0, markdown_twin: 0, llms_full: 0 },
  crawl_delay_clamped: null,
  render: 'auto',
  pages_rendered: 0,
  pages_render_missed: 0,
  render_hint: null,
  llm_enhance: false,
  llm_pages_total: 0,
  llm_pages_done: 0,
  llm_pages_failed: 0,
  llm_snippets_enhanced: 0,
  pages_found: 40,
  pages_crawled: 12,
  pages_skipped: 2,
  pages_failed: 1,
  snippets_stored: 57,
  current_url: 'https://x.org/guide/install',
  pages_per_second: 4.2,
  eta_seconds: 6,
  error: null,
  created_at: '2025-01-01T00:00:00.000Z',
  started_at: '2025-01-01T00:00:00.000Z',
  completed_at: null,
  heartbeat_at: null,
  updated_at: '2025-01-01T00:00:00.000Z',
};

// eslint-disable-next-line no-control-regex
const plain = (s: string) => s.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');

describe('crawl progress display', () => {
  it('draws a live block in a terminal and its final state when stopped', async () => {
    const term = new FakeTerminal();
    const display = renderLiveJob(fromCrawlJob(base), { stdout: term as unknown as NodeJS.WriteStream, width: 90 });
    await new Promise((r) => setTimeout(r, 50));
    expect(plain(term.output)).toMatch(/Widget Docs\s+running/);
    expect(plain(term.output)).toMatch(/12\/40 pages · 1 failed · 2 skipped · 57 snippets · 4\.2 pages\/s · ETA 0:06/);
    expect(plain(term.output)).toContain('→ https://x.org/guide/install');
    display.update(fromCrawlJob({ ...base, pages_crawled: 30, snippets_stored: 120 }));
    await new Promise((r) => setTimeout(r, 50));
    display.stop(fromCrawlJob({ ...base, status: 'completed', pages_crawled: 37, current_url: null, eta_seconds: null }));
    // It completed with one failed page: partial (jobStatusText), as the CLI's job lines and the dashboard say.
    expect(plain(term.output)).toMatch(/partial\s+█+\s+100%/);
    const clean = new FakeTerminal();
    renderLiveJob(fromCrawlJob(base), { stdout: clean as unknown as NodeJS.WriteStream, width: 90 }).stop(
      fromCrawlJob({ ...base, status: 'completed', pages_crawled: 37, pages_failed: 0, current_url: null, eta_seconds: null }),
    );
    expect(plain(clean.output)).toMatch(/completed\s+█+\s+100%/);
  });

  it('prints plain lines without a terminal', () => {
    expect(progressLine(base)).toBe('crawl 3f2a9c1e running: 12/40 pages, 2 skipped, 1 failed, 57 snippets, 4.2 pages/s, ETA 6s');
    expect(summaryLine({ ...base, status: 'failed', error: 'No page was crawled: HTTP 404' })).toMatch(/Crawl of Widget Docs failed: No page was crawled: HTTP 404/);
    expect(summaryLine({ ...base, status: 'cancelled' })).toMatch(/docdex crawl resume 3f2a9c1e-/);
  });
});
