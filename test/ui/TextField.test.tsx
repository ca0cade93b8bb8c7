import { afterEach, describe, expect, it } from 'vitest';
import { TextField, editText } from '../../src/ui/components/TextField.js';
import { lines, renderWithProviders } from './render.js';

let view: ReturnType<typeof renderWithProviders> | undefined;
afterEach(() => view?.unmount());

const plain = { backspace: false, delete: false, ctrl: false, meta: false };

describe('TextField', () => {
  it('shows label, value and a cursor when focused', () => {
    view = renderWithProviders(<TextField label="Name" value="fastapi" focused width={40} />);
    expect(view.lastFrame()).toBe('Name: fastapi▏');
  });

  it('shows the placeholder when empty and unfocused, and the error under the field', () => {
    view = renderWithProviders(<TextField label="Version" value="" focused={false} width={40} placeholder="(unversioned)" error="Version cannot contain spaces." />);
    expect(lines(view.lastFrame())).toEqual(['Version: (unversioned)', '  Version cannot contain spaces.']);
  });

  it('keeps the end of a long value in view', () => {
    view = renderWithProviders(<TextField label="q" value={`${'a'.repeat(40)}END`} focused width={20} />);
    expect(view.lastFrame()).toContain('END');
    expect(view.lastFrame()).toContain('…');
  });
});

describe('editText', () => {
  it('appends typed text, deletes with backspace, clears with ctrl-u', () => {
    expect(editText('ab', 'c', plain)).toBe('abc');
    expect(editText('abc', '', { ...plain, backspace: true })).toBe('ab');
    expect(editText('abc', '', { ...plain, delete: true })).toBe('ab');
    expect(editText('abc', 'u', { ...plain, ctrl: true })).toBe('');
    expect(editText('abc', 'x', { ...plain, ctrl: true })).toBe('abc');
  });

  it('turns pasted newlines into spaces and drops control characters', () => {
    expect(editText('', 'a\nb\u0007c', plain)).toBe('a bc');
  });
});
