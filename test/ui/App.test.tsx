import { afterEach, describe, expect, it, vi } from 'vitest';
import { App } from '../../src/ui/App.js';
import { createFakeData } from './fixtures.js';
import { KEYS, lines, renderWithProviders } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

function exited(v: ReturnType<typeof renderWithProviders>): Promise<'exited'> {
  return v.instance.waitUntilExit().then(() => 'exited' as const);
}

describe('App', () => {
  it('fills an 80×24 terminal: tab bar, screen, help bar', async () => {
    view = renderWithProviders(<App />);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Totals'));
    const frame = lines(view.lastFrame());
    expect(frame).toHaveLength(24);
    // The tabs never shrink; the database shown gives way from its start.
    expect(frame[0]).toMatch(/^docdex {3}1 Overview {4}2 Sources {4}3 Jobs {4}4 Search {4}5 Agent +…:5432\/docdex$/);
    expect(frame[23]).toMatch(/^1-5 screens {2}tab screen {2}q quit/);
    for (const line of frame) expect([...line].length).toBeLessThanOrEqual(80);
  });

  it('switches screens with digits and Tab', async () => {
    view = renderWithProviders(<App />);
    await view.type('2');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('press / to filter'));
    await view.type(KEYS.tab);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('10/30 pages'));
    await view.type(KEYS.tab);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Type to search snippets'));
    await view.type(KEYS.tab);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Repositories    Sessions'));
    await view.type(KEYS.tab);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Totals'));
    await view.type('5');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('←→ section'));
  });

  it('quits on q', async () => {
    view = renderWithProviders(<App />);
    const done = exited(view);
    await view.type('q');
    await expect(done).resolves.toBe('exited');
  });

  it('quits on Ctrl-C, even while typing', async () => {
    view = renderWithProviders(<App initialScreen="Search" />);
    const done = exited(view);
    await view.type('x', KEYS.ctrlC);
    await expect(done).resolves.toBe('exited');
  });

  it('types q and digits into the search field instead of quitting', async () => {
    view = renderWithProviders(<App initialScreen="Search" searchDebounceMs={20} />);
    const done = Promise.race([exited(view), new Promise((r) => setTimeout(() => r('running'), 300))]);
    await view.type('q', '2');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Search: q2'));
    await expect(done).resolves.toBe('running');
    // So the tab bar does not offer digits there; Tab is the way out, and the other screens number their tabs.
    expect(lines(view.lastFrame())[0]).toMatch(/^docdex {3}Overview {4}Sources {4}Jobs {4}Search /);
    await view.type(KEYS.tab);
    await vi.waitFor(() => expect(lines(view!.lastFrame())[0]).toMatch(/^docdex {3}1 Overview {4}2 Sources/));
  });

  it('does not quit or switch while a form owns the keys', async () => {
    view = renderWithProviders(<App initialScreen="Sources" />);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('fastapi'));
    await view.type('e');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('URL patterns: /docs/*'));
    await view.type('q', '3', KEYS.tab);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Version: 0.110▏'));
    expect(view.lastFrame()).toContain('Name: fastapiq3');
  });

  it('adapts to resizing, and says so when the terminal is too small', async () => {
    view = renderWithProviders(<App />);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Totals'));
    view.resize(120, 40);
    await vi.waitFor(() => expect(lines(view!.lastFrame())).toHaveLength(40));
    expect(lines(view.lastFrame())[0]).toHaveLength(120);
    view.resize(50, 12);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Terminal too small (50×12)'));
    expect(view.lastFrame().replace(/\s+/g, ' ')).toContain('docdex dashboard needs at least 60×16.');
    view.resize(80, 24);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Totals'));
  });

  it('shows a banner while the database is unreachable and recovers by itself', async () => {
    const data = createFakeData();
    view = renderWithProviders(<App initialScreen="Jobs" />, { data, retry: { baseMs: 50, maxMs: 100 } });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('10/30 pages'));
    await vi.waitFor(() => expect(data.subscribers()).toBe(1));
    data.setDown(true);
    data.dropEvents();
    await vi.waitFor(() => expect(view!.lastFrame()).toMatch(/✖ Database connection lost \(event connection closed\)\. Retrying (in \ds|now), attempt \d/));
    // The last data stays on screen under the banner.
    expect(view.lastFrame()).toContain('10/30 pages');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('ECONNREFUSED'));
    expect(lines(view.lastFrame())).toHaveLength(24);

    data.jobsList[0]!.crawled = 20;
    data.setDown(false);
    await vi.waitFor(() => expect(view!.lastFrame()).not.toContain('Database connection lost'), { timeout: 3000 });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('20/30 pages'));
    await vi.waitFor(() => expect(data.subscribers()).toBe(1));
  });
});
