import { afterEach, describe, expect, it, vi } from 'vitest';

// Colour support is decided when chalk loads, so this file forces it before importing Ink or the theme.
vi.stubEnv('FORCE_COLOR', '1');
const { render } = await import('ink-testing-library');
const { theme, colorEnabled, stateColor } = await import('../../src/ui/theme.js');
const { Banner } = await import('../../src/ui/components/Banner.js');
const { ProgressBar } = await import('../../src/ui/components/ProgressBar.js');
const { Table } = await import('../../src/ui/components/Table.js');
const { TOOL_COLUMNS } = await import('../../src/ui/screens/agent/sessions.js');
const { TOOL_CALLS } = await import('./fixtures.js');

const ESC = '\u001B[';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.stubEnv('FORCE_COLOR', '1');
});

describe('theme', () => {
  it('maps meanings to colours', () => {
    vi.stubEnv('NO_COLOR', '');
    expect(colorEnabled()).toBe(true);
    expect(theme.status.error).toBe('red');
    expect(stateColor('completed')).toBe(theme.status.success);
    expect(stateColor('failed')).toBe(theme.status.error);
    expect(stateColor('running')).toBe(theme.status.info);
  });

  it('has no colour at all under NO_COLOR, read at use time (so --no-color works after import)', () => {
    vi.stubEnv('NO_COLOR', '1');
    expect(colorEnabled()).toBe(false);
    expect([theme.status.error, theme.text.accent, theme.chart.progress, theme.syntax.keyword, stateColor('failed')]).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });

  it('renders colour escapes normally and none under NO_COLOR', () => {
    vi.stubEnv('NO_COLOR', '');
    const coloured = render(<Banner kind="error" message="lost" />);
    expect(coloured.lastFrame()).toContain(`${ESC}31m`);
    coloured.unmount();

    vi.stubEnv('NO_COLOR', '1');
    const plain = render(<ProgressBar ratio={0.5} width={14} />);
    expect(plain.lastFrame()).toBe('█████░░░░  50%');
    plain.unmount();
    const banner = render(<Banner kind="error" message="lost" />);
    // Bold is emphasis, not colour; NO_COLOR leaves it. No foreground colour code may appear.
    const frame = banner.lastFrame() ?? '';
    expect([0, 1, 2, 3, 4, 5, 6, 7, 9].filter((n) => frame.includes(`${ESC}3${n}m`))).toEqual([]);
    banner.unmount();
  });

  it('draws the sandbox badge of a tool call in green, and nothing on the others', () => {
    vi.stubEnv('NO_COLOR', '');
    const table = render(<Table columns={TOOL_COLUMNS} rows={TOOL_CALLS} rowKey={(c) => c.id} selected={-1} height={5} width={80} />);
    const frame = table.lastFrame() ?? '';
    // Every colour change starts a segment; the badge's segment is green (the status before it may share it).
    expect(frame.split(ESC).find((segment) => segment.includes('sandbox'))).toMatch(/^32m/);
    expect(frame.split('sandbox')).toHaveLength(2);
    table.unmount();
  });
});
