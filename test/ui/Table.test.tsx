import { afterEach, describe, expect, it } from 'vitest';
import { Table, columnWidths, scrollOffset } from '../../src/ui/components/Table.js';
import type { Column } from '../../src/ui/components/Table.js';
import { lines, renderWithProviders } from './render.js';

interface Row {
  id: string;
  name: string;
  n: number;
}
const columns: Column<Row>[] = [
  { header: 'name', value: (r) => r.name },
  { header: 'n', width: 5, align: 'right', value: (r) => String(r.n) },
];
const rows: Row[] = Array.from({ length: 30 }, (_, i) => ({ id: `r${i}`, name: `row ${i}`, n: i * 10 }));

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

describe('Table', () => {
  it('renders the header and rows in fixed columns, with the selected row marked', () => {
    view = renderWithProviders(<Table columns={columns} rows={rows.slice(0, 3)} rowKey={(r) => r.id} selected={1} height={5} width={30} />);
    expect(lines(view.lastFrame())).toEqual([
      `  name${' '.repeat(18)}     n`,
      `  row 0${' '.repeat(17)}     0`,
      `› row 1${' '.repeat(17)}    10`,
      `  row 2${' '.repeat(17)}    20`,
      // The table keeps its height, so the screen below it does not jump as rows come and go.
      '',
    ]);
  });

  it('scrolls to keep the selection in view and says where it is', () => {
    view = renderWithProviders(<Table columns={columns} rows={rows} rowKey={(r) => r.id} selected={20} height={6} width={30} />);
    const frame = lines(view.lastFrame());
    expect(frame).toHaveLength(6);
    expect(frame[0]).toContain('19–23 of 30');
    expect(frame.find((l) => l.startsWith('›'))).toContain('row 20');
  });

  it('shows the empty text when there are no rows', () => {
    view = renderWithProviders(<Table columns={columns} rows={[]} rowKey={(r) => r.id} selected={-1} height={4} width={30} emptyText="No sources yet." />);
    expect(lines(view.lastFrame())[1]).toBe('  No sources yet.');
  });

  it('truncates long values with an ellipsis', () => {
    view = renderWithProviders(<Table columns={columns} rows={[{ id: 'x', name: 'a'.repeat(50), n: 1 }]} rowKey={(r) => r.id} selected={-1} height={3} width={30} />);
    expect(lines(view.lastFrame())[1]).toBe(`  ${'a'.repeat(21)}…     1`);
  });
});

describe('table layout', () => {
  it('gives flexible columns what the fixed ones leave', () => {
    expect(columnWidths(columns, 30)).toEqual([22, 5]);
    expect(columnWidths([...columns, { header: 'x', value: () => '' }], 40)).toEqual([15, 5, 15]);
    // Never narrower than a few cells, even when that overflows: the row is cut at the edge instead.
    expect(columnWidths([...columns, { header: 'x', value: () => '' }], 12)).toEqual([6, 5, 6]);
  });

  it('centres the selection once the list scrolls, and stops at the end', () => {
    expect(scrollOffset(2, 30, 10)).toBe(0);
    expect(scrollOffset(15, 30, 10)).toBe(10);
    expect(scrollOffset(29, 30, 10)).toBe(20);
    expect(scrollOffset(5, 4, 10)).toBe(0);
  });
});
