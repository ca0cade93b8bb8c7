import type { SourceEdit } from './data/types.js';

export interface SourceFormValues {
  name: string;
  version: string;
  /** Comma-separated, as typed. */
  urlPatterns: string;
}

export type SourceFormErrors = Partial<Record<keyof SourceFormValues, string>>;

// The same bounds the schema enforces (sources.name is 1..200 chars), so the form fails before the database.
const MAX_NAME = 200;
const MAX_VERSION = 100;
const MAX_PATTERNS = 50;

export function parsePatterns(text: string): string[] {
  return text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/** Checks the inline edit form; returns the edit to save, or the message per field. */
export function validateSourceForm(values: SourceFormValues): { ok: true; edit: SourceEdit } | { ok: false; errors: SourceFormErrors } {
  const errors: SourceFormErrors = {};
  const name = values.name.trim();
  const version = values.version.trim();
  if (name === '') errors.name = 'Name is required.';
  else if (name.length > MAX_NAME) errors.name = `Name is at most ${MAX_NAME} characters.`;
  if (version.length > MAX_VERSION) errors.version = `Version is at most ${MAX_VERSION} characters.`;
  else if (/\s/.test(version)) errors.version = 'Version cannot contain spaces.';
  const patterns = parsePatterns(values.urlPatterns);
  if (patterns.length > MAX_PATTERNS) errors.urlPatterns = `At most ${MAX_PATTERNS} patterns.`;
  else {
    const bad = patterns.find((p) => /\s/.test(p));
    if (bad) errors.urlPatterns = `"${bad}" contains a space; separate patterns with commas.`;
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, edit: { name, version, urlPatterns: patterns } };
}
