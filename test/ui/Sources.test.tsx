import { afterEach, describe, expect, it, vi } from 'vitest';
import { Sources, filterSources } from '../../src/ui/screens/Sources.js';
import { SOURCES, createFakeData } from './fixtures.js';
import { KEYS, lines, renderWithProviders } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

const screen = <Sources active width={80} height={22} />;
const selectedLine = () => lines(view!.lastFrame()).find((l) => l.startsWith('›')) ?? '';

async function ready(data = createFakeData()) {
  view = renderWithProviders(screen, { data });
  await vi.waitFor(() => expect(view!.lastFrame()).toContain('fastapi'));
  return data;
}

describe('Sources screen', () => {
  it('shows name, version, snippets, pages, last crawl and state', async () => {
    await ready();
    const frame = lines(view!.lastFrame());
    expect(frame[0]).toBe('3 sources  press / to filter');
    expect(frame[1]).toMatch(/^ {2}name +version +snippets +pages last crawl state$/);
    expect(frame[2]).toMatch(/^› fastapi +0\.110 +1520 +212 3m ago +completed$/);
    expect(frame[3]).toMatch(/^ {2}react +- +830 +95 1d ago +running$/);
    expect(frame[4]).toMatch(/^ {2}notes +1 +12 +3 never +idle$/);
    expect(frame.at(-1)).toBe('↑↓ select  / filter  enter open  r recrawl  e edit  d delete  tab screen  q quit');
  });

  it('handles keys that arrive together: Down Down moves two rows, Down Enter opens the row it reached', async () => {
    const data = await ready();
    // One write: a fast typist, a paste or a slow terminal delivers several keys in one chunk.
    await view!.type(`${KEYS.down}${KEYS.down}`);
    await vi.waitFor(() => expect(selectedLine()).toContain('notes'));
    await view!.type(`${KEYS.up}${KEYS.up}${KEYS.down}${KEYS.enter}`);
    await vi.waitFor(() => expect(data.calls).toContainEqual(['sourceSnippets', 's2']));
    expect(data.calls.filter((c) => c[0] === 'sourceSnippets')).toEqual([['sourceSnippets', 's2']]);
  });

  it('filters as you type and clears with Esc', async () => {
    await ready();
    await view!.type('/', 'r', 'e');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Filter: re▏'));
    expect(view!.lastFrame()).not.toContain('fastapi');
    expect(selectedLine()).toContain('react');
    await view!.type(KEYS.escape);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('fastapi'));
  });

  it('recrawls the selected source, but not an uploaded one', async () => {
    const data = await ready();
    await view!.type('r');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('✔ Recrawl of fastapi 0.110 queued (job j-new). See screen 3.'));
    expect(data.calls).toContainEqual(['recrawlSource', 's1']);
    await view!.type(KEYS.down, KEYS.down, 'r');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('✖ notes 1 was uploaded, not crawled'));
    expect(data.calls.filter((c) => c[0] === 'recrawlSource')).toHaveLength(1);
  });

  it('edits name, version and URL patterns inline, validating before saving', async () => {
    const data = await ready();
    await view!.type('e');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('URL patterns: /docs/*'));
    expect(view!.lastFrame()).toContain('Edit fastapi 0.110');
    expect(view!.lastFrame()).toContain('Name: fastapi▏');

    await view!.type('\u0015', KEYS.enter);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Name is required.'));
    expect(data.calls.some((c) => c[0] === 'updateSource')).toBe(false);

    await view!.type('fastapi-docs', KEYS.tab, ' beta', KEYS.enter);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Version cannot contain spaces.'));
    await view!.type(KEYS.backspace, KEYS.backspace, KEYS.backspace, KEYS.backspace, KEYS.backspace, KEYS.tab, ', /api/*', KEYS.enter);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('✔ Saved fastapi-docs.'));
    expect(data.calls).toContainEqual(['updateSource', 's1', { name: 'fastapi-docs', version: '0.110', urlPatterns: ['/docs/*', '/api/*'] }]);
    await vi.waitFor(() => expect(selectedLine()).toContain('fastapi-docs'));
  });

  it('keeps the form open with the reason when the save is refused', async () => {
    await ready(createFakeData({ rejectUpdate: 'A source named "react" with version "" already exists.' }));
    await view!.type('e');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('URL patterns: /docs/*'));
    await view!.type(KEYS.enter);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('already exists.'));
    expect(view!.lastFrame()).toContain('Edit fastapi 0.110');
    await view!.type(KEYS.escape);
    await vi.waitFor(() => expect(view!.lastFrame()).not.toContain('Edit fastapi'));
  });

  it('deletes only after confirmation', async () => {
    const data = await ready();
    await view!.type('d');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Delete fastapi 0.110 with its 1520 snippets and 212 pages? (y/N)'));
    await view!.type('n');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Delete cancelled.'));
    expect(data.calls.some((c) => c[0] === 'deleteSource')).toBe(false);
    await view!.type('d', 'y');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('✔ Deleted fastapi 0.110.'));
    expect(data.calls).toContainEqual(['deleteSource', 's1']);
    await vi.waitFor(() => expect(view!.lastFrame()).not.toMatch(/fastapi +0\.110 +1520/));
  });

  it('opens the snippets of a source and one snippet in full', async () => {
    await ready();
    await view!.type(KEYS.enter);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Snippets of fastapi 0.110  1'));
    expect(selectedLine()).toMatch(/^› Create an app +python +https:\/\/fastapi\.example\/docs\/fi…$/);
    await view!.type(KEYS.enter);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('from fastapi import FastAPI'));
    expect(view!.lastFrame()).toContain('https://fastapi.example/docs/first-steps/');
    await view!.type(KEYS.escape);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('Snippets of fastapi'));
    await view!.type(KEYS.escape);
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('press / to filter'));
  });

  it('matches the filter on name or version', () => {
    expect(filterSources(SOURCES, '0.11').map((s) => s.name)).toEqual(['fastapi']);
    expect(filterSources(SOURCES, ' ').length).toBe(3);
  });
});

describe('Sources screen without a worker', () => {
  it('says the recrawl waits for a worker', async () => {
    const data = createFakeData();
    data.workerWarning = 'No crawl worker is running; start `docdex worker`.';
    view = renderWithProviders(screen, { data });
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('fastapi'));
    await view.type('r');
    await vi.waitFor(() => expect(view!.lastFrame()).toContain('ℹ Recrawl of fastapi 0.110 queued (job j-new). No crawl worker is running'));
  });
});
