import { afterEach, describe, expect, it } from 'vitest';
import { HelpBar } from '../../src/ui/components/HelpBar.js';
import { renderWithProviders } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

describe('HelpBar', () => {
  it('lists each key with its action', () => {
    view = renderWithProviders(
      <HelpBar
        keys={[
          { key: 'q', label: 'quit' },
          { key: 'tab', label: 'screen' },
        ]}
        width={80}
      />,
    );
    expect(view.lastFrame().trimEnd()).toBe('q quit  tab screen');
  });

  it('cuts what does not fit instead of wrapping to a second line', () => {
    const keys = Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, label: 'something' }));
    view = renderWithProviders(<HelpBar keys={keys} width={40} />);
    const frame = view.lastFrame();
    expect(frame.split('\n')).toHaveLength(1);
    expect(frame.trimEnd().length).toBeLessThanOrEqual(40);
    expect(frame).toContain('k0 something');
  });
});
