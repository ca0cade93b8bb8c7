import { Box, Text } from 'ink';
import { theme } from '../theme.js';

export interface KeyHint {
  key: string;
  label: string;
}

export interface HelpBarProps {
  keys: KeyHint[];
  width?: number;
}

/** The keys that work right now, on one line; hints that do not fit are cut from the end. */
export function HelpBar({ keys, width }: HelpBarProps) {
  return (
    <Box width={width} height={1} overflow="hidden" flexShrink={0}>
      <Text wrap="truncate-end">
        {keys.map((k, i) => (
          <Text key={`${k.key}-${i}`}>
            {i > 0 ? '  ' : ''}
            <Text color={theme.text.accent} bold>
              {k.key}
            </Text>
            <Text color={theme.text.secondary}> {k.label}</Text>
          </Text>
        ))}
      </Text>
    </Box>
  );
}
