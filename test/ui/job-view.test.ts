import { describe, expect, it } from 'vitest';
import type { JobEvent } from '../../src/core/events/notify.js';
import { applyJobEvent, fromCrawlJob, fromUploadJob, isActive } from '../../src/ui/job-view.js';

const crawl = fromCrawlJob({
  id: 'j1',
  name: 'docs',
  status: 'running',
  pages_found: 10,
  pages_crawled: 3,
  pages_skipped: 1,
  pages_failed: 1,
  snippets_stored: 7,
  current_url: 'http://a/1',
  pages_per_second: 2,
  eta_seconds: 5,
  error: null,
  created_at: new Date('2025-06-01T00:00:00Z'),
});

function event(partial: Partial<JobEvent>): JobEvent {
  return { event: 'crawl_progress', jobId: 'j1', kind: 'crawl', state: 'running', counters: {}, timestamp: '', ...partial };
}

describe('job views', () => {
  it('reads a crawl job row', () => {
    expect(crawl).toMatchObject({ done: 5, total: 10, crawled: 3, failed: 1, skipped: 1, snippets: 7, rate: 2, etaSeconds: 5, createdAt: '2025-06-01T00:00:00.000Z' });
  });

  it('reads an upload job row', () => {
    // processed_files includes the failed ones.
    const u = fromUploadJob({ id: 'u', name: 'n', status: 'processing', file_count: 4, processed_files: 2, failed_files: 1, snippets_extracted: 9 });
    expect(u).toMatchObject({ kind: 'upload', done: 2, crawled: 1, failed: 1, total: 4, snippets: 9, rate: null });
    const next = applyJobEvent(u, {
      event: 'upload_progress',
      jobId: 'u',
      kind: 'upload',
      state: 'processing',
      counters: { processed_files: 4, failed_files: 1, file_count: 4, snippets_extracted: 12 },
      timestamp: '',
    });
    expect(next).toMatchObject({ done: 4, crawled: 3, failed: 1, total: 4, snippets: 12 });
  });

  it('gives a stored upload row the rate and ETA its events would carry', () => {
    const started = '2025-06-01T00:00:00.000Z';
    const base = { id: 'u', name: 'n', file_count: 10, processed_files: 4, failed_files: 0, snippets_extracted: 9, started_at: started };
    // 4 files in 8 s: 0.5 files/s, 6 files left.
    const running = fromUploadJob({ ...base, status: 'processing' }, Date.parse(started) + 8000);
    expect(running).toMatchObject({ rate: 0.5, etaSeconds: 12 });
    const finished = fromUploadJob({ ...base, status: 'completed', processed_files: 10, completed_at: '2025-06-01T00:00:05.000Z' }, Date.parse(started) + 60_000);
    expect(finished).toMatchObject({ rate: 2, etaSeconds: null });
    // Not started yet: nothing to measure.
    expect(fromUploadJob({ ...base, status: 'queued', processed_files: 0, started_at: null })).toMatchObject({ rate: null, etaSeconds: null });
  });

  it('folds progress events, under either counter spelling, keeping what they omit', () => {
    const a = applyJobEvent(crawl, event({ counters: { pages_crawled: 6, pages_found: 12 }, rate: 3, currentUrl: 'http://a/2' }));
    expect(a).toMatchObject({ crawled: 6, total: 12, failed: 1, skipped: 1, done: 8, snippets: 7, rate: 3, currentUrl: 'http://a/2' });
    const b = applyJobEvent(a, event({ counters: { pagesFailed: 2, snippetsStored: 9 } }));
    expect(b).toMatchObject({ failed: 2, snippets: 9, done: 9 });
  });

  it('ignores events of other jobs and clears ETA and URL on completion', () => {
    expect(applyJobEvent(crawl, event({ jobId: 'other', counters: { pages_crawled: 99 } }))).toBe(crawl);
    const done = applyJobEvent(crawl, event({ event: 'job_complete', state: 'completed' }));
    expect(done).toMatchObject({ status: 'completed', etaSeconds: null, currentUrl: null });
  });

  it("shows an enhancing job by the LLM stage's pages, from its row and from its events, and stays active", () => {
    const row = fromCrawlJob({
      id: 'j1',
      name: 'docs',
      status: 'enhancing',
      pages_found: 10,
      pages_crawled: 10,
      pages_skipped: 0,
      pages_failed: 0,
      snippets_stored: 20,
      llm_pages_total: 8,
      llm_pages_done: 3,
    });
    expect(row).toMatchObject({ status: 'enhancing', done: 3, total: 8 });
    expect(isActive(row)).toBe(true);
    const next = applyJobEvent(crawl, event({ state: 'enhancing', counters: { llm_pages_total: 8, llm_pages_done: 5, llm_pages_failed: 0, llm_snippets_enhanced: 9 } }));
    expect(next).toMatchObject({ status: 'enhancing', done: 5, total: 8, currentUrl: null, etaSeconds: null });
    const done = applyJobEvent(next, event({ event: 'job_complete', state: 'completed', counters: { pages_found: 10, pages_crawled: 10, pages_skipped: 0, pages_failed: 0 } }));
    expect(done).toMatchObject({ status: 'completed', done: 10, total: 10 });
  });
});
