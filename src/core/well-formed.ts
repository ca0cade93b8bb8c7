// Text that arrives as JSON may hold a lone UTF-16 surrogate: `"\ud800"` is valid JSON, but no character. Such
// a string breaks whatever treats it as text: encodeURIComponent throws (an upload's URL answered 500), a file
// name cannot hold it, PostgreSQL refuses it in json columns and UTF-8 encoding silently turns it into U+FFFD
// in text columns. So every request's input is checked once, where it is validated, and a bad field is named.

// String.prototype.isWellFormed is ES2024 (Node 20+); the project's lib setting is ES2023.
function isWellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** Where in a request's input a string (a value or an object key) is not well-formed UTF-16. */
export interface IllFormedText {
  /** Object keys and array indexes from the input's root to the string; [] when the input itself is the string. */
  path: Array<string | number>;
}

interface Visit {
  value: unknown;
  key: string | number | undefined;
  parent: Visit | undefined;
}

function pathOf(visit: Visit): Array<string | number> {
  const path: Array<string | number> = [];
  for (let v: Visit | undefined = visit; v !== undefined && v.key !== undefined; v = v.parent) path.push(v.key);
  return path.reverse();
}

/**
 * The first string in `value` (object keys included, depth first) that holds a lone surrogate, or null.
 * Iterative, so any nesting depth is safe; linear in the input's size.
 */
export function findIllFormedText(value: unknown): IllFormedText | null {
  const stack: Visit[] = [{ value, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    const v = visit.value;
    if (typeof v === 'string') {
      if (!isWellFormed(v)) return { path: pathOf(visit) };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i] as unknown, key: i, parent: visit });
    } else if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        if (!isWellFormed(key)) return { path: [...pathOf(visit), key] };
        stack.push({ value: child, key, parent: visit });
      }
    }
  }
  return null;
}

/** The one sentence every interface says about such a field (its name is given by the caller's convention). */
export function illFormedTextMessage(field: string): string {
  return `${field} is not well-formed text: it holds a lone UTF-16 surrogate (half of a character, such as \\ud800 without its pair). Send valid Unicode.`;
}
