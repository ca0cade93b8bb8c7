import { Box, Text } from 'ink';
import { highlight } from '../syntax.js';
import type { TokenKind } from '../syntax.js';
import { theme } from '../theme.js';

export interface CodeViewProps {
  code: string;
  language: string;
  width: number;
  height: number;
  /** First line shown, for scrolling. */
  offset?: number;
}

function colour(kind: TokenKind): string | undefined {
  return theme.syntax[kind];
}

/** Syntax-coloured code, cut to the box (long lines are truncated, never wrapped, so columns stay aligned). */
export function CodeView({ code, language, width, height, offset = 0 }: CodeViewProps) {
  const lines = highlight(code, language);
  const start = Math.max(0, Math.min(offset, Math.max(0, lines.length - height)));
  const shown = lines.slice(start, start + height);
  return (
    <Box flexDirection="column" width={width} height={Math.min(height, Math.max(1, shown.length))} overflow="hidden">
      {shown.map((tokens, i) => (
        <Text key={start + i} wrap="truncate-end">
          {tokens.length === 0
            ? ' '
            : tokens.map((t, j) => (
                <Text key={j} color={colour(t.kind)}>
                  {t.text}
                </Text>
              ))}
        </Text>
      ))}
    </Box>
  );
}

export function codeLineCount(code: string): number {
  return code.split('\n').length;
}
