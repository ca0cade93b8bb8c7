import { afterEach, describe, expect, it, vi } from 'vitest';
import { Jobs } from '../../src/ui/screens/Jobs.js';
import { createFakeData, job } from './fixtures.js';
import { KEYS, lines, renderWithProviders, tick } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

const screen = <Jobs active width={80} height={22} />;

describe('Jobs screen', () => {
  it('lists running jobs first, each with a bar, counts, rate, ETA and current URL', async () => {
    view = renderWithProviders(screen);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('fastapi'));
    const frame = lines(view.lastFrame());
    expect(frame[0]).toMatch(/^› fastapi +running +█+░+ +40%$/);
    expect(frame[1]).toBe('    10/30 pages · 2 failed · 45 snippets · 1.5 pages/s · ETA 0:12');
    expect(frame[2]).toBe('    → https://fastapi.example/docs/tutorial/');
    expect(frame[3]).toMatch(/^ {2}react +failed/);
    expect(frame[5]).toBe('    error: start URL returned 503');
    expect(frame[6]).toMatch(/^ {2}django +completed +█+ 100%$/);
    expect(frame.at(-1)).toMatch(/^↑↓ select {2}c cancel {2}r resume/);
  });

  it('handles keys that arrive together: Down Down moves two jobs, and c acts on the job reached', async () => {
    const data = createFakeData();
    view = renderWithProviders(screen, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('fastapi'));
    await view.type(`${KEYS.down}${KEYS.down}`);
    await vi.waitFor(() => expect(lines(view!.lastFrame()).find((l) => l.startsWith('›'))).toMatch(/^› django/));
    await view.type(`${KEYS.up}r`);
    await vi.waitFor(() => expect(data.calls).toContainEqual(['resumeCrawl', 'j2']));
  });

  it('moves the bars from the live event stream without a reload', async () => {
    const data = createFakeData();
    view = renderWithProviders(screen, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('10/30 pages'));
    const loads = data.calls.filter((c) => c[0] === 'jobs').length;
    data.emit({
      event: 'crawl_progress',
      jobId: 'j1',
      kind: 'crawl',
      state: 'running',
      counters: { pages_crawled: 25, pages_found: 30, pages_failed: 2, snippets_stored: 99 },
      rate: 4,
      etaSeconds: 2,
      currentUrl: 'https://fastapi.example/docs/last/',
    });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('25/30 pages · 2 failed · 99 snippets · 4.0 pages/s · ETA 0:02'));
    expect(view.lastFrame()).toContain('→ https://fastapi.example/docs/last/');
    expect(lines(view.lastFrame())[0]).toMatch(/ 90%$/);
    expect(data.calls.filter((c) => c[0] === 'jobs')).toHaveLength(loads);
  });

  it('reloads on job_complete and for a job it has not seen', async () => {
    const data = createFakeData();
    view = renderWithProviders(screen, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('fastapi'));
    data.jobsList.unshift(job({ id: 'j9', name: 'newcomer', createdAt: '2025-06-01T11:59:59Z' }));
    data.emit({ event: 'crawl_progress', jobId: 'j9', kind: 'crawl', state: 'running', counters: { pages_crawled: 1 } });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('newcomer'), { timeout: 3000 });
  });

  it('shows the last page errors of the selected job', async () => {
    view = renderWithProviders(screen);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('react'));
    await view.type(KEYS.down);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('last errors:'));
    expect(view.lastFrame()).toContain('https://react.example/a HTTP 503');
    expect(lines(view.lastFrame()).find((l) => l.startsWith('›'))).toMatch(/react/);
  });

  it('cancels a running job and resumes a failed one from the keyboard', async () => {
    const data = createFakeData();
    view = renderWithProviders(screen, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('fastapi'));
    await view.type('c');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('✔ Cancel fastapi: done.'));
    expect(data.calls).toContainEqual(['cancelCrawl', 'j1']);
    await vi.waitFor(() => expect(lines(view!.lastFrame())[0]).toMatch(/cancelled/));

    await view.type(KEYS.down);
    await vi.waitFor(() => expect(lines(view!.lastFrame()).find((l) => l.startsWith('›'))).toMatch(/react/));
    await view.type('r');
    await vi.waitFor(() => expect(data.calls).toContainEqual(['resumeCrawl', 'j2']));
  });

  it('refuses to cancel a finished job, saying why', async () => {
    const data = createFakeData({ jobs: [job({ id: 'j3', name: 'django', status: 'completed' })] });
    view = renderWithProviders(screen, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('django'));
    await view.type('c');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('✖ django is completed; only queued or running jobs can be cancelled.'));
    expect(data.calls.some((c) => c[0] === 'cancelCrawl')).toBe(false);
  });

  it('shows an action that fails', async () => {
    const data = createFakeData();
    data.cancelCrawl = () => Promise.reject(new Error('Job j1 already finished.'));
    view = renderWithProviders(screen, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('fastapi'));
    await view.type('c');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('✖ Cancel fastapi failed: Job j1 already finished.'));
  });

  it('says what to do when there are no jobs', async () => {
    view = renderWithProviders(screen, { data: createFakeData({ jobs: [] }) });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('No jobs yet. Run `docdex crawl start <url>` or `docdex upload <path>`.'));
  });
});

const UPLOAD = job({
  id: 'u1',
  kind: 'upload',
  name: 'notes',
  status: 'processing',
  done: 2,
  total: 8,
  crawled: 1,
  failed: 1,
  snippets: 6,
  rate: null,
  etaSeconds: null,
  currentUrl: null,
  createdAt: '2025-06-01T11:58:00Z',
});

describe('Jobs screen with uploads', () => {
  it('lists an upload job in files, among the crawls', async () => {
    view = renderWithProviders(screen, { data: createFakeData({ jobs: [job({ id: 'j1' }), UPLOAD] }) });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('notes'));
    const frame = lines(view.lastFrame());
    const row = frame.findIndex((l) => /^ {2}notes +processing +█+░+ +25%$/.test(l));
    expect(row).toBeGreaterThan(0);
    expect(frame[row + 1]).toBe('    1/8 files · 1 failed · 6 snippets · - files/s · ETA -');
  });

  it('moves an upload row from its upload_progress events without a reload', async () => {
    const data = createFakeData({ jobs: [UPLOAD] });
    view = renderWithProviders(screen, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('1/8 files'));
    const loads = data.calls.filter((c) => c[0] === 'jobs').length;
    data.emit({
      event: 'upload_progress',
      jobId: 'u1',
      kind: 'upload',
      state: 'processing',
      counters: { file_count: 8, processed_files: 6, failed_files: 1, snippets_extracted: 20 },
      rate: 2,
      etaSeconds: 1,
      currentUrl: 'guide/install.md',
    });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('5/8 files · 1 failed · 20 snippets · 2.0 files/s · ETA 0:01'));
    expect(view.lastFrame()).toContain('→ guide/install.md');
    expect(lines(view.lastFrame())[0]).toMatch(/^› notes +processing +█+░+ +75%$/);
    expect(data.calls.filter((c) => c[0] === 'jobs')).toHaveLength(loads);
  });

  it('leaves an upload row alone on an LLM event for the same job', async () => {
    const data = createFakeData({ jobs: [UPLOAD] });
    view = renderWithProviders(screen, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('1/8 files'));
    data.emit({ event: 'llm_progress', jobId: 'u1', kind: 'llm', state: 'running', counters: { processed_files: 7 } });
    await tick(50);
    expect(lines(view.lastFrame())[0]).toMatch(/^› notes +processing /);
    expect(view.lastFrame()).toContain('1/8 files');
  });

  it('shows the last failed files of a selected upload', async () => {
    const data = createFakeData({ jobs: [UPLOAD], errors: { u1: [{ location: 'docs/binary.md', error: 'binary content (contains NUL bytes)' }] } });
    view = renderWithProviders(screen, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('last errors:'));
    expect(view.lastFrame()).toContain('docs/binary.md binary content (contains NUL bytes)');
    expect(data.calls).toContainEqual(['jobErrors', 'u1', 'upload']);
  });

  it('says how to cancel or resume an upload from a shell, and does neither here', async () => {
    const data = createFakeData({ jobs: [UPLOAD, job({ id: 'u2', kind: 'upload', name: 'manual', status: 'failed', createdAt: '2025-06-01T11:00:00Z' })] });
    view = renderWithProviders(screen, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('notes'));
    // The help bar offers only what works on the selected row.
    expect(lines(view.lastFrame()).at(-1)).toMatch(/^↑↓ select {2}g refresh/);
    await view.type('c');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('✖ notes is an upload; from a shell: docdex jobs cancel u1 (or jobs resume).'));
    await view.type(KEYS.down);
    await vi.waitFor(() => expect(lines(view!.lastFrame()).find((l) => l.startsWith('›'))).toMatch(/manual/));
    await view.type('r');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('✖ manual is an upload; from a shell: docdex jobs cancel u2 (or jobs resume).'));
    await tick(50);
    expect(data.calls.some((c) => c[0] === 'cancelCrawl' || c[0] === 'resumeCrawl')).toBe(false);
  });
});
