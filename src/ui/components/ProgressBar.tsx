import { Text } from 'ink';
import { theme } from '../theme.js';

export interface ProgressBarProps {
  /** 0..1; values outside are clamped. */
  ratio: number;
  /** Total width in cells, percentage included. */
  width: number;
  showPercent?: boolean;
}

/** `██████░░░░  60%`: block characters, so the bar still reads with NO_COLOR. */
export function ProgressBar({ ratio, width, showPercent = true }: ProgressBarProps) {
  const r = Number.isFinite(ratio) ? Math.max(0, Math.min(1, ratio)) : 0;
  const label = showPercent ? ` ${String(Math.floor(r * 100)).padStart(3)}%` : '';
  const barWidth = Math.max(1, width - label.length);
  const filled = Math.round(r * barWidth);
  return (
    <Text>
      <Text color={theme.chart.progress}>{'█'.repeat(filled)}</Text>
      <Text color={theme.chart.track}>{'░'.repeat(barWidth - filled)}</Text>
      {label}
    </Text>
  );
}
