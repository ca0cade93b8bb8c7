import { afterEach, describe, expect, it } from 'vitest';
import { TabBar } from '../../src/ui/components/TabBar.js';
import { renderWithProviders } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

describe('TabBar', () => {
  it('numbers the tabs and right-aligns the context', () => {
    view = renderWithProviders(<TabBar title="docdex" tabs={['Overview', 'Sources']} active={1} right="db:5432/x" width={60} />);
    const frame = view.lastFrame();
    expect(frame).toMatch(/^docdex {3}1 Overview {4}2 Sources {2}/);
    expect(frame).toMatch(/ db:5432\/x$/);
    expect(frame.length).toBe(60);
  });
});

describe('TabBar with little room', () => {
  it('keeps every tab whole and cuts the context from the left', () => {
    view = renderWithProviders(<TabBar title="docdex" tabs={['Overview', 'Sources', 'Crawls', 'Search']} active={0} right="127.0.0.1:42719/docdex_t_59082febaba" width={80} />);
    const frame = view.lastFrame();
    expect(frame).toMatch(/^docdex {3}1 Overview {4}2 Sources {4}3 Crawls {4}4 Search {2}/);
    expect(frame).toMatch(/…[\w.:/]*febaba$/);
    expect(frame.length).toBe(80);
  });
});
