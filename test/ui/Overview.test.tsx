import { afterEach, describe, expect, it, vi } from 'vitest';
import { Overview } from '../../src/ui/screens/Overview.js';
import { createFakeData } from './fixtures.js';
import { lines, renderWithProviders } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

describe('Overview screen', () => {
  it('shows totals, the languages chart, jobs by state and recent jobs within 80×22', async () => {
    view = renderWithProviders(<Overview active width={80} height={22} />);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Totals'));
    const frame = lines(view.lastFrame());
    expect(frame[0]).toBe('Totals sources 3  documents 310  snippets 2362  languages 4');
    expect(frame).toContain('Languages');
    expect(frame.find((l) => l.startsWith('python'))).toMatch(/^python +▇+ 1400$/);
    expect(frame).toContain('crawl   queued 0  running 1  completed 5  failed 1  cancelled 2');
    expect(frame).toContain('upload  queued 0  processing 0  completed 1  failed 0  cancelled 0');
    expect(frame.find((l) => l.includes('fastapi'))).toMatch(/crawl +fastapi +running +10 +45 1m ago/);
    // A completed job with a failed file reads partial, as on the Jobs screen and in the CLI (issue #49).
    expect(frame.find((l) => l.includes('notes'))).toMatch(/upload +notes +partial +3 +12 /);
    expect(frame).toHaveLength(22);
    expect(frame[21]).toMatch(/^1-5 screens {2}tab screen {2}q quit/);
  });

  it('says it is loading before the first answer', () => {
    view = renderWithProviders(<Overview active width={80} height={22} />);
    expect(view.lastFrame()).toContain('Loading statistics…');
  });

  it('reloads when a job event arrives (live)', async () => {
    const data = createFakeData();
    view = renderWithProviders(<Overview active width={80} height={22} />, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('snippets 2362'));
    data.statsValue.totals.snippets = 2400;
    data.emit({ event: 'crawl_progress', jobId: 'j1', kind: 'crawl', state: 'running', counters: { snippets_stored: 83 } });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('snippets 2400'), { timeout: 3000 });
  });

  it('shows a failed load without going blank', async () => {
    const data = createFakeData();
    view = renderWithProviders(<Overview active width={80} height={22} />, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Totals'));
    data.stats = () => Promise.reject(new Error('relation "sources" does not exist'));
    data.emit({ event: 'job_complete', jobId: 'j1', kind: 'crawl', state: 'completed', counters: {} });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('✖ Could not load statistics: relation "sources" does not exist'), { timeout: 3000 });
    expect(view.lastFrame()).toContain('Totals');
  });
});
