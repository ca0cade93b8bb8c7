import { Box, Text } from 'ink';
import { truncate } from '../format.js';
import { theme } from '../theme.js';

export interface TextFieldProps {
  label: string;
  value: string;
  focused: boolean;
  width: number;
  placeholder?: string;
  error?: string | null;
}

/**
 * A one-line field. It only displays: the screen that owns it handles the keys (see `editText`), which keeps
 * the key logic in one place per screen and the field trivially testable.
 */
export function TextField({ label, value, focused, width, placeholder, error }: TextFieldProps) {
  const room = Math.max(4, width - label.length - 3);
  // Show the end of a long value: that is where the typing happens.
  const shown = [...value].length > room - 1 ? `…${[...value].slice(-(room - 2)).join('')}` : value;
  return (
    <Box flexDirection="column" flexShrink={0}>
      <Text wrap="truncate-end">
        <Text color={focused ? theme.border.focused : theme.text.secondary} bold={focused}>
          {label}:
        </Text>{' '}
        {value === '' && !focused && placeholder ? <Text color={theme.text.secondary}>{truncate(placeholder, room)}</Text> : shown}
        {focused ? <Text color={theme.border.focused}>▏</Text> : null}
      </Text>
      {error ? (
        <Text color={theme.status.error} wrap="truncate-end">
          {'  '}
          {error}
        </Text>
      ) : null}
    </Box>
  );
}

/** Applies one keypress to a field's text: printable input appends, Backspace/Delete remove the last char. */
export function editText(value: string, input: string, key: { backspace: boolean; delete: boolean; ctrl: boolean; meta: boolean }): string {
  if (key.backspace || key.delete) return [...value].slice(0, -1).join('');
  if (key.ctrl && input === 'u') return '';
  if (key.ctrl || key.meta || !input) return value;
  // Pasted text may carry newlines or tabs; a one-line field keeps them as spaces.
  const clean = input.replace(/[\r\n\t]+/g, ' ').replace(/\p{Cc}/gu, '');
  return value + clean;
}
