import { Box, Text } from 'ink';
import { theme } from '../theme.js';

export interface TabBarProps {
  title: string;
  tabs: string[];
  active: number;
  /** Right-aligned context, e.g. the database being shown; cut from the left when space is short. */
  right?: string;
  width: number;
  /** Whether digits switch screens now: a screen whose keys go into a text field (Search) takes them as text. */
  numbered?: boolean;
}

export function TabBar({ title, tabs, active, right, width, numbered = true }: TabBarProps) {
  return (
    <Box width={width} height={1} overflow="hidden" flexShrink={0}>
      {/* The tabs never shrink: they are how the user navigates; the context gives way instead. */}
      <Box flexShrink={0}>
        <Text bold color={theme.text.accent}>
          {title}
        </Text>
        {tabs.map((tab, i) => (
          <Text key={tab}>
            {'  '}
            {i === active ? (
              <Text inverse bold>
                {numbered ? ` ${i + 1} ${tab} ` : ` ${tab} `}
              </Text>
            ) : (
              <Text color={theme.text.secondary}>{numbered ? ` ${i + 1} ${tab} ` : ` ${tab} `}</Text>
            )}
          </Text>
        ))}
      </Box>
      <Box flexGrow={1} flexShrink={1} justifyContent="flex-end" overflow="hidden" marginLeft={1}>
        {right ? (
          <Text color={theme.text.secondary} wrap="truncate-start">
            {right}
          </Text>
        ) : null}
      </Box>
    </Box>
  );
}
