import { Box, Text } from 'ink';
import { theme } from '../theme.js';

export interface BannerProps {
  kind: 'error' | 'warning' | 'info' | 'success';
  message: string;
  width?: number;
}

const ICONS = { error: '✖', warning: '⚠', info: 'ℹ', success: '✔' } as const;

/** One line across the screen for a state the user must notice (a lost connection, a failed action). */
export function Banner({ kind, message, width }: BannerProps) {
  const color = kind === 'error' ? theme.status.error : kind === 'warning' ? theme.status.warning : kind === 'success' ? theme.status.success : theme.status.info;
  return (
    <Box width={width} flexShrink={0}>
      <Text color={color} bold wrap="truncate-end">
        {ICONS[kind]} {message}
      </Text>
    </Box>
  );
}
