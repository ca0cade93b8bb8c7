import { afterEach, describe, expect, it, vi } from 'vitest';
import { Search } from '../../src/ui/screens/Search.js';
import { SNIPPETS, createFakeData } from './fixtures.js';
import { KEYS, lines, renderWithProviders } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

const screen = <Search active width={80} height={22} debounceMs={60} />;

describe('Search screen', () => {
  it('invites typing before there is a query', () => {
    view = renderWithProviders(screen);
    expect(lines(view.lastFrame())[1]).toMatch(/^Type to search snippets/);
  });

  it('searches as you type, once per pause rather than once per key', async () => {
    const data = createFakeData();
    view = renderWithProviders(screen, { data });
    await view.type('a', 'p', 'p');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('1 result'));
    const searches = data.calls.filter((c) => c[0] === 'search');
    expect(searches).toEqual([['search', { query: 'app', limit: 50 }]]);
    expect(lines(view.lastFrame()).find((l) => l.startsWith('›'))).toMatch(/^› Create an app +snippet +python +fastapi 0\.110 +fastapi\.example\/doc…$/);
  });

  it('handles keys that arrive together: Down Enter opens the row it reached', async () => {
    view = renderWithProviders(screen);
    await view.type('e');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('2 results'));
    await view.type(`${KEYS.down}${KEYS.enter}`);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('useState(0)'));
  });

  it('filters by source and language', async () => {
    const data = createFakeData();
    view = renderWithProviders(screen, { data });
    await view.type('use', KEYS.right, 'react', KEYS.right, 'JavaScript');
    await vi.waitFor(() => expect(data.calls).toContainEqual(['search', { query: 'use', limit: 50, source: 'react', language: 'javascript' }]));
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('useState hook'));
    expect(view.lastFrame()).toMatch(/source: react▏?/);
  });

  it('names the library it searched when the source filter is not an exact name', async () => {
    const data = createFakeData();
    view = renderWithProviders(screen, { data });
    await view.type('use', KEYS.right, 'rea');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('in react, the closest match to "rea"'));
  });

  it('shows the full snippet with its URL on Enter, and goes back on Esc', async () => {
    view = renderWithProviders(screen);
    await view.type('fastapi');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('1 result'));
    await view.type(KEYS.enter);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('@app.get("/")'));
    const frame = lines(view.lastFrame());
    expect(frame.slice(0, 3)).toEqual(['Create an app', 'python · fastapi 0.110', 'https://fastapi.example/docs/first-steps/']);
    expect(frame.at(-1)).toMatch(/^↑↓ scroll {2}esc back to results/);
    await view.type(KEYS.escape);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Search: fastapi'));
  });

  it('says when nothing matches and shows a failed search', async () => {
    const data = createFakeData();
    view = renderWithProviders(screen, { data });
    await view.type('zzz');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('No snippet matches.'));
    data.search = () => Promise.reject(new Error('No source matches "nope".'));
    await view.type(KEYS.right, 'nope');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('✖ Search failed: No source matches "nope".'));
  });

  it('keeps only the answer to the latest query when answers arrive out of order', async () => {
    const data = createFakeData();
    const slow = data.search.bind(data);
    data.search = async (request) => {
      // The first query answers last.
      if (request.query === 'fastapi') await new Promise((r) => setTimeout(r, 300));
      return slow(request);
    };
    view = renderWithProviders(screen, { data });
    await view.type('fastapi');
    await new Promise((r) => setTimeout(r, 100));
    // Ctrl-U clears the field (Esc followed at once by a letter would read as Alt+letter).
    await view.type('\u0015', 'useState');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('useState hook'));
    await new Promise((r) => setTimeout(r, 400));
    expect(view.lastFrame()).toContain('useState hook');
    expect(view.lastFrame()).not.toContain('Create an app');
  });
});

describe('Search screen snippet view', () => {
  it('scrolls long code and stops at its last line', async () => {
    const long = { ...SNIPPETS[0]!, id: 9, title: 'Long one', code: Array.from({ length: 60 }, (_, i) => `line_${i}`).join('\n') };
    view = renderWithProviders(screen, { data: createFakeData({ snippets: [long] }) });
    await view.type('line_1');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Long one'));
    await view.type(KEYS.enter);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('lines 1–'));
    for (let i = 0; i < 5; i++) await view.type(' ');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('line_59'));
    expect(view.lastFrame()).toMatch(/lines \d+–60 of 60/);
    await view.type(KEYS.up);
    await vi.waitFor(() => expect(view!.lastFrame()).not.toContain('line_59'));
  });
});
