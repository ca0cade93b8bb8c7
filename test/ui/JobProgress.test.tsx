import { afterEach, describe, expect, it } from 'vitest';
import { JobProgress } from '../../src/ui/components/JobProgress.js';
import { job } from './fixtures.js';
import { lines, renderWithProviders } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

describe('JobProgress', () => {
  it('shows name, state, bar, counts, rate, ETA and the current URL of a running crawl', () => {
    view = renderWithProviders(<JobProgress job={job({ id: 'j1' })} width={80} />);
    const [first, second, third] = lines(view.lastFrame());
    expect(first).toMatch(/^ {2}fastapi +running +█+░+ +40%$/);
    expect(second).toBe('    10/30 pages · 2 failed · 45 snippets · 1.5 pages/s · ETA 0:12');
    expect(third).toBe('    → https://fastapi.example/docs/tutorial/');
    expect(first!.length).toBeLessThanOrEqual(80);
  });

  it('marks the selected job and shows its last errors', () => {
    const failed = job({ id: 'j2', status: 'failed', error: 'start URL returned 503', etaSeconds: 30 });
    view = renderWithProviders(<JobProgress job={failed} width={80} selected errors={[{ location: 'https://x.example/a', error: 'HTTP 503' }]} />);
    const frame = lines(view.lastFrame());
    expect(frame[0]).toMatch(/^› fastapi/);
    // A finished job has no ETA, whatever the row said.
    expect(frame[1]).toContain('ETA -');
    expect(frame[2]).toBe('    error: start URL returned 503');
    expect(frame[3]).toBe('    last errors:');
    expect(frame[4]).toBe('      https://x.example/a HTTP 503');
  });

  it('fills the bar for a completed job and hides the URL', () => {
    view = renderWithProviders(<JobProgress job={job({ id: 'j3', status: 'completed', done: 7, total: 9, currentUrl: 'https://gone' })} width={60} />);
    const frame = lines(view.lastFrame());
    expect(frame[0]).toMatch(/100%$/);
    expect(frame[0]).not.toContain('░');
    expect(view.lastFrame()).not.toContain('https://gone');
  });

  it('draws an empty bar and no rate for a failed job that crawled nothing', () => {
    const failed = job({ id: 'j4', status: 'failed', done: 1, total: 1, crawled: 0, failed: 1, snippets: 0, rate: 0.7, etaSeconds: null, error: 'No page was crawled: HTTP 404' });
    view = renderWithProviders(<JobProgress job={failed} width={80} />);
    const frame = lines(view.lastFrame());
    expect(frame[0]).toMatch(/ 0%$/);
    expect(frame[0]).not.toContain('█');
    expect(frame[1]).toBe('    0/1 pages · 1 failed · 0 snippets · - pages/s · ETA -');
  });

  it('says "1 snippet"', () => {
    view = renderWithProviders(<JobProgress job={job({ id: 'j5', snippets: 1 })} width={80} />);
    expect(lines(view.lastFrame())[1]).toContain(' 1 snippet · ');
  });

  it('counts files for an upload job', () => {
    view = renderWithProviders(<JobProgress job={job({ id: 'u1', kind: 'upload', name: 'notes', crawled: 3, total: 5, rate: 12 })} width={80} />);
    expect(lines(view.lastFrame())[1]).toBe('    3/5 files · 2 failed · 45 snippets · 12 files/s · ETA 0:12');
  });

  it('stays within a narrow width', () => {
    view = renderWithProviders(<JobProgress job={job({ id: 'j1', name: 'a-very-long-documentation-source-name-indeed' })} width={50} />);
    for (const line of lines(view.lastFrame())) expect([...line].length).toBeLessThanOrEqual(50);
  });
});
