import { Box, Text } from 'ink';
import type { SnippetHit } from '../data/types.js';
import { theme } from '../theme.js';
import { CodeView, codeLineCount } from './CodeView.js';

export interface SnippetDetailProps {
  snippet: SnippetHit;
  width: number;
  height: number;
  offset?: number;
}

/** A section's description is the start of its text, which the view shows whole. */
function descriptionOf(snippet: SnippetHit): string {
  return snippet.kind === 'section' ? '' : snippet.description;
}

function codeHeightOf(snippet: SnippetHit, height: number): number {
  const header = descriptionOf(snippet) ? 4 : 3;
  return Math.max(1, height - header - 1);
}

/** The furthest the code can scroll in a view of `height` lines: the last line at the bottom. */
export function maxSnippetOffset(snippet: SnippetHit, height: number): number {
  return Math.max(0, codeLineCount(snippet.code) - codeHeightOf(snippet, height));
}

/**
 * The full snippet: title, where it comes from (its URL in full), its description and the coloured code; a
 * section: its breadcrumb, where it comes from and its text.
 */
export function SnippetDetail({ snippet, width, height, offset = 0 }: SnippetDetailProps) {
  const source = snippet.sourceVersion ? `${snippet.sourceName} ${snippet.sourceVersion}` : snippet.sourceName;
  const codeHeight = codeHeightOf(snippet, height);
  const lines = codeLineCount(snippet.code);
  const more = lines > codeHeight ? ` lines ${Math.min(offset, lines - codeHeight) + 1}–${Math.min(lines, Math.min(offset, lines - codeHeight) + codeHeight)} of ${lines}` : '';
  return (
    <Box flexDirection="column" width={width} height={height} overflow="hidden">
      <Text bold wrap="truncate-end">
        {snippet.title || '(untitled snippet)'}
      </Text>
      <Text wrap="truncate-end">
        <Text color={theme.status.info}>{snippet.kind === 'section' ? `section · ${snippet.language}` : snippet.language}</Text>
        <Text color={theme.text.secondary}>
          {' '}
          · {source}
          {more}
        </Text>
      </Text>
      <Text color={theme.text.link} wrap="truncate-middle">
        {snippet.url}
      </Text>
      {descriptionOf(snippet) ? (
        <Text color={theme.text.secondary} wrap="truncate-end">
          {snippet.description}
        </Text>
      ) : null}
      <Box marginTop={1}>
        <CodeView code={snippet.code} language={snippet.kind === 'section' ? 'markdown' : snippet.language} width={width} height={codeHeight} offset={offset} />
      </Box>
    </Box>
  );
}
