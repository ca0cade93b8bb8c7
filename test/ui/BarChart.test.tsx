import { afterEach, describe, expect, it } from 'vitest';
import { BarChart } from '../../src/ui/components/BarChart.js';
import { lines, renderWithProviders } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

describe('BarChart', () => {
  it('scales bars to the largest value, largest first', () => {
    view = renderWithProviders(
      <BarChart
        items={[
          { label: 'js', value: 50 },
          { label: 'python', value: 100 },
        ]}
        width={20}
      />,
    );
    expect(lines(view.lastFrame())).toEqual([`python ${'▇'.repeat(9)} 100`, `js     ${'▇'.repeat(5)}      50`]);
  });

  it('folds the tail into "other" beyond maxBars', () => {
    const items = ['a', 'b', 'c', 'd', 'e'].map((label, i) => ({ label, value: 10 - i }));
    view = renderWithProviders(<BarChart items={items} width={30} maxBars={3} />);
    const frame = lines(view.lastFrame());
    expect(frame).toHaveLength(3);
    expect(frame[2]).toMatch(/^other .* 21$/);
  });

  it('says so when there is nothing to chart', () => {
    view = renderWithProviders(<BarChart items={[]} width={30} emptyText="No snippets yet." />);
    expect(view.lastFrame()).toBe('No snippets yet.');
  });
});
