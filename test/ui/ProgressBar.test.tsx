import { afterEach, describe, expect, it } from 'vitest';
import { ProgressBar } from '../../src/ui/components/ProgressBar.js';
import { renderWithProviders } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

describe('ProgressBar', () => {
  it('fills in proportion and prints the percentage within the given width', () => {
    view = renderWithProviders(<ProgressBar ratio={0.5} width={25} />);
    expect(view.lastFrame()).toBe(`${'█'.repeat(10)}${'░'.repeat(10)}  50%`);
  });

  it('clamps out-of-range and non-finite ratios', () => {
    view = renderWithProviders(<ProgressBar ratio={3} width={15} />);
    expect(view.lastFrame()).toBe(`${'█'.repeat(10)} 100%`);
    view.unmount();
    view = renderWithProviders(<ProgressBar ratio={Number.NaN} width={15} />);
    expect(view.lastFrame()).toBe(`${'░'.repeat(10)}   0%`);
  });

  it('can leave the percentage out', () => {
    view = renderWithProviders(<ProgressBar ratio={0.25} width={8} showPercent={false} />);
    expect(view.lastFrame()).toBe('██░░░░░░');
  });
});
