import { Box, Text } from 'ink';
import { fit, truncate } from '../format.js';
import { theme } from '../theme.js';

type Colour = string | undefined;

export interface Column<T> {
  header: string;
  /** Fixed width in cells; columns without one share what is left. */
  width?: number;
  align?: 'left' | 'right';
  value(row: T): string;
  color?(row: T): Colour;
}

export interface TableProps<T> {
  columns: Column<T>[];
  rows: T[];
  rowKey(row: T): string;
  /** Index of the highlighted row, or -1 for none. */
  selected: number;
  /** Lines available, header included. */
  height: number;
  width: number;
  emptyText?: string;
}

const GAP = 1;
const MIN_FLEX = 6;

export function columnWidths<T>(columns: Column<T>[], width: number): number[] {
  const fixed = columns.reduce((sum, c) => sum + (c.width ?? 0), 0);
  const flex = columns.filter((c) => c.width === undefined).length;
  const free = Math.max(0, width - fixed - GAP * (columns.length - 1) - 2);
  const share = flex > 0 ? Math.max(MIN_FLEX, Math.floor(free / flex)) : 0;
  return columns.map((c) => c.width ?? share);
}

/** First visible row so that `selected` stays in view, centred once the list scrolls. */
export function scrollOffset(selected: number, count: number, visible: number): number {
  if (count <= visible || selected < 0) return 0;
  return Math.min(Math.max(0, selected - Math.floor(visible / 2)), count - visible);
}

/** A scrolling table: a header, the rows in view, and "a–b of n" when they do not all fit. */
export function Table<T>({ columns, rows, rowKey, selected, height, width, emptyText = 'Nothing to show.' }: TableProps<T>) {
  const widths = columnWidths(columns, width);
  const visible = Math.max(1, height - 1);
  const offset = scrollOffset(selected, rows.length, visible);
  const shown = rows.slice(offset, offset + visible);
  const position = rows.length > visible ? ` ${offset + 1}–${offset + shown.length} of ${rows.length}` : '';
  // The position wins over the last header cells: knowing there is more matters more than a column title.
  const header = truncate(columns.map((c, i) => fit(c.header, widths[i]!, c.align)).join(' '.repeat(GAP)), Math.max(0, width - 2 - position.length)).trimEnd();
  return (
    <Box flexDirection="column" width={width} height={height} overflow="hidden" flexShrink={0}>
      <Text bold wrap="truncate-end">
        {'  '}
        {header}
        <Text color={theme.text.secondary}>{position}</Text>
      </Text>
      {rows.length === 0 ? (
        <Text color={theme.text.secondary}>{`  ${emptyText}`}</Text>
      ) : (
        shown.map((row, i) => {
          const isSelected = offset + i === selected;
          return (
            <Text key={rowKey(row)} wrap="truncate-end">
              <Text color={theme.text.accent}>{isSelected ? '› ' : '  '}</Text>
              {columns.map((c, ci) => (
                <Text key={c.header} inverse={isSelected} color={isSelected ? undefined : c.color?.(row)}>
                  {fit(c.value(row), widths[ci]!, c.align)}
                  {ci < columns.length - 1 ? ' '.repeat(GAP) : ''}
                </Text>
              ))}
            </Text>
          );
        })
      )}
    </Box>
  );
}
