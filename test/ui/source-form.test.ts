import { describe, expect, it } from 'vitest';
import { parsePatterns, validateSourceForm } from '../../src/ui/source-form.js';

describe('source form validation', () => {
  it('accepts a valid edit and normalises it', () => {
    expect(validateSourceForm({ name: ' fastapi ', version: '0.110', urlPatterns: '/docs/*, ,/api/*' })).toEqual({
      ok: true,
      edit: { name: 'fastapi', version: '0.110', urlPatterns: ['/docs/*', '/api/*'] },
    });
  });

  it('reports each invalid field', () => {
    const result = validateSourceForm({ name: '  ', version: '1 2', urlPatterns: '/docs/* /api/*' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual({
      name: 'Name is required.',
      version: 'Version cannot contain spaces.',
      urlPatterns: '"/docs/* /api/*" contains a space; separate patterns with commas.',
    });
    expect(validateSourceForm({ name: 'x'.repeat(201), version: '', urlPatterns: '' })).toMatchObject({ ok: false, errors: { name: 'Name is at most 200 characters.' } });
  });

  it('splits patterns on commas', () => {
    expect(parsePatterns('')).toEqual([]);
    expect(parsePatterns('a,b , c')).toEqual(['a', 'b', 'c']);
  });
});
