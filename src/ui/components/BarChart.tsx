import { Box, Text } from 'ink';
import { fit, formatCount } from '../format.js';
import { theme } from '../theme.js';

export interface BarChartItem {
  label: string;
  value: number;
}

export interface BarChartProps {
  items: BarChartItem[];
  width: number;
  /** At most this many bars; the rest are summed into "other". */
  maxBars?: number;
  emptyText?: string;
}

/** Horizontal bars scaled to the largest value, with the label on the left and the count on the right. */
export function BarChart({ items, width, maxBars = 8, emptyText = 'No data yet.' }: BarChartProps) {
  if (items.length === 0) return <Text color={theme.text.secondary}>{emptyText}</Text>;
  const sorted = [...items].sort((a, b) => b.value - a.value);
  let bars = sorted;
  if (sorted.length > maxBars) {
    const rest = sorted.slice(maxBars - 1).reduce((sum, i) => sum + i.value, 0);
    bars = [...sorted.slice(0, maxBars - 1), { label: 'other', value: rest }];
  }
  const labelWidth = Math.min(14, Math.max(...bars.map((b) => b.label.length)));
  const valueWidth = Math.max(...bars.map((b) => formatCount(b.value).length));
  const barWidth = Math.max(1, width - labelWidth - valueWidth - 2);
  const max = Math.max(1, ...bars.map((b) => b.value));
  return (
    <Box flexDirection="column">
      {bars.map((b) => {
        const length = b.value > 0 ? Math.max(1, Math.round((b.value / max) * barWidth)) : 0;
        return (
          <Text key={b.label} wrap="truncate-end">
            {fit(b.label, labelWidth)} <Text color={theme.chart.bar}>{'▇'.repeat(length)}</Text>
            {' '.repeat(barWidth - length)} {fit(formatCount(b.value), valueWidth, 'right')}
          </Text>
        );
      })}
    </Box>
  );
}
