import { afterEach, describe, expect, it } from 'vitest';
import { SnippetDetail } from '../../src/ui/components/SnippetDetail.js';
import { SNIPPETS } from './fixtures.js';
import { lines, renderWithProviders } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

describe('SnippetDetail', () => {
  it('shows title, language and source, the full URL, the description and the code', () => {
    view = renderWithProviders(<SnippetDetail snippet={SNIPPETS[0]!} width={80} height={20} />);
    const frame = lines(view.lastFrame());
    expect(frame.slice(0, 6)).toEqual(['Create an app', 'python · fastapi 0.110', 'https://fastapi.example/docs/first-steps/', 'The smallest FastAPI application.', '', 'from fastapi import FastAPI']);
    expect(frame).toContain('    return {"hello": 42}');
  });

  it('says which lines are shown when the code is taller than the view', () => {
    view = renderWithProviders(<SnippetDetail snippet={SNIPPETS[0]!} width={80} height={8} offset={2} />);
    expect(lines(view.lastFrame())[1]).toBe('python · fastapi 0.110 lines 3–5 of 8');
    expect(lines(view.lastFrame())[5]).toBe('# the app object');
  });
});
