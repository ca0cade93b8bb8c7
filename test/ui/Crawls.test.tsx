import { afterEach, describe, expect, it, vi } from 'vitest';
import { Crawls } from '../../src/ui/screens/Crawls.js';
import { createFakeData, job } from './fixtures.js';
import { KEYS, lines, renderWithProviders } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

const screen = <Crawls active width={80} height={22} />;

describe('Crawls screen', () => {
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

  it('moves the bars from the live event stream without a reload', async () => {
    const data = createFakeData();
    view = renderWithProviders(screen, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('10/30 pages'));
    const loads = data.calls.filter((c) => c[0] === 'crawlJobs').length;
    data.emit({ event: 'crawl_progress', jobId: 'j1', kind: 'crawl', state: 'running', counters: { pages_crawled: 25, pages_found: 30, pages_failed: 2, snippets_stored: 99 }, rate: 4, etaSeconds: 2, currentUrl: 'https://fastapi.example/docs/last/' });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('25/30 pages · 2 failed · 99 snippets · 4.0 pages/s · ETA 0:02'));
    expect(view.lastFrame()).toContain('→ https://fastapi.example/docs/last/');
    expect(lines(view.lastFrame())[0]).toMatch(/ 90%$/);
    expect(data.calls.filter((c) => c[0] === 'crawlJobs')).toHaveLength(loads);
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
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('No crawl jobs yet. Start one with `docdex crawl start <url>`.'));
  });
});
