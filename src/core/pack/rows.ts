import type { z } from 'zod';
import { UserError } from '../errors.js';

/** One NDJSON line through its schema; a bad line is named by its part and line number, never echoed whole. */
export function parseRow<S extends z.ZodType>(schema: S, line: string, where: string, lineNumber: number): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new UserError(`${where} line ${lineNumber} is not JSON.`, { code: 'pack_invalid' });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.map(String).join('.') || '(row)';
    throw new UserError(`${where} line ${lineNumber} is invalid: ${field}: ${issue.message}.`, { code: 'pack_invalid' });
  }
  return parsed.data;
}
