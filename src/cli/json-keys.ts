/**
 * The one key convention of every `--json` output: snake_case, as the REST API, search and sync already
 * write it. Core results keep their TypeScript names (camelCase); the base command converts a result once,
 * on its way out, so no command can print a camelCase key (issue #49: `sourceId` beside `source_id`).
 *
 * Only camelCase identifiers are converted (`sourceId` → `source_id`, `qemuPid` → `qemu_pid`). Keys that are
 * data rather than field names are left as they are: environment variable names (`PATH`), labels and
 * package names (`@types/node`, `docdex.image`), which contain no lower-case letter followed by a capital.
 */

const CAMEL = /^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$/;

export function snakeCaseKey(key: string): string {
  return CAMEL.test(key) ? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : key;
}

function convert(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(convert);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [snakeCaseKey(key), convert(inner)]));
}

/**
 * A command's result as its `--json` output: serialised as JSON would serialise it (dates as ISO strings,
 * `toJSON` honoured, undefined dropped), then every camelCase key in snake_case.
 */
export function jsonOutput(result: unknown): unknown {
  if (result === undefined) return undefined;
  return convert(JSON.parse(JSON.stringify(result)) as unknown);
}
