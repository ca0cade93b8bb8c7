// Whitespace collapsing shared by the extractors.

// A run of two or more whitespace characters, or one that is not a plain space.
const RUNS = /\s{2,}|[^\S ]/g;

/**
 * Every run of whitespace (`\s`) as one space: the result of
 * `s.replace(/\s+/g, ' ')`, without building a new string when the only
 * whitespace is already single spaces, as in most prose.
 */
export function collapseSpaces(s: string): string {
  return s.replace(RUNS, ' ');
}
