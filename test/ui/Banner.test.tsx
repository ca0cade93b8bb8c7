import { afterEach, describe, expect, it } from 'vitest';
import { Banner } from '../../src/ui/components/Banner.js';
import { renderWithProviders } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

describe('Banner', () => {
  it('prefixes the message with an icon per kind', () => {
    view = renderWithProviders(<Banner kind="error" message="Database connection lost" width={80} />);
    expect(view.lastFrame().trimEnd()).toBe('✖ Database connection lost');
    view.unmount();
    view = renderWithProviders(<Banner kind="success" message="Saved." width={80} />);
    expect(view.lastFrame().trimEnd()).toBe('✔ Saved.');
  });

  it('keeps a long message on one line', () => {
    view = renderWithProviders(<Banner kind="warning" message={'x'.repeat(200)} width={30} />);
    expect(view.lastFrame().split('\n')).toHaveLength(1);
    expect(view.lastFrame()).toMatch(/…$/);
  });
});
