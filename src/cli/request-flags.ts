import { Flags } from '@oclif/core';
import { crawlFieldEntries, fieldFacts, splitList } from '../core/crawl-request.js';
import type { CrawlField, CrawlFieldName, CrawlRequestInput } from '../core/crawl-request.js';

/**
 * oclif flags derived from the crawl request's fields (`core/crawl-request.ts`): name, kind, help text with
 * the bounds and default. A field without `flag: false` is a flag of `crawl start`; adding a field to the
 * request adds its flag.
 */

/** A field's flag name: its own, else the field name in kebab-case. */
export function flagName(name: CrawlFieldName, field: CrawlField): string {
  return typeof field.flag === 'string' ? field.flag : name.replaceAll('_', '-');
}

/** The fields the CLI takes as flags, with their flag names. */
export function crawlFlagFields(): Array<{ name: CrawlFieldName; flag: string; field: CrawlField }> {
  return crawlFieldEntries()
    .filter(([, field]) => field.flag !== false)
    .map(([name, field]) => ({ name, flag: flagName(name, field), field }));
}

/** The help text: the field's line, then its bounds and default as the schema states them. */
export function flagHelp(field: CrawlField): string {
  const facts = fieldFacts(field.schema);
  const notes: string[] = [];
  if (facts.type === 'array') notes.push('repeatable or comma-separated');
  if ((facts.type === 'integer' || facts.type === 'number') && facts.minimum !== undefined && facts.maximum !== undefined) notes.push(`${facts.minimum}-${facts.maximum}`);
  if (facts.default !== undefined && facts.type !== 'boolean' && facts.type !== 'array') notes.push(`default ${String(facts.default)}`);
  return notes.length === 0 ? field.description : `${field.description.replace(/\.$/, '')} (${notes.join(', ')}).`;
}

export interface FlagOptions {
  /**
   * Let oclif refuse values outside the field's bounds. Off for `crawl start`, whose values the crawl request
   * itself validates, so the CLI reports them exactly as REST and MCP do.
   */
  enforceBounds?: boolean;
}

/** One field's oclif flag. The request's defaults are not oclif defaults: an absent flag stays absent. */
function fieldFlag(field: CrawlField, options: FlagOptions) {
  const facts = fieldFacts(field.schema);
  const description = flagHelp(field);
  if (facts.type === 'boolean') return Flags.boolean({ description, default: false });
  if (facts.type === 'integer' || facts.type === 'number') {
    const bounds = options.enforceBounds ? { ...(facts.minimum === undefined ? {} : { min: facts.minimum }), ...(facts.maximum === undefined ? {} : { max: facts.maximum }) } : {};
    return Flags.integer({ description, ...bounds });
  }
  if (facts.type === 'array') return Flags.string({ description, multiple: true });
  return Flags.string({ description });
}

/** The flags of the named fields (all the CLI takes when `names` is absent), keyed by flag name. */
export function crawlRequestFlags(names?: readonly CrawlFieldName[], options: FlagOptions = {}) {
  const chosen = crawlFlagFields().filter((f) => names === undefined || names.includes(f.name));
  return Object.fromEntries(chosen.map(({ flag, field }) => [flag, fieldFlag(field, options)]));
}

/** The request fields the flags give: absent flags (and an unset boolean) are left out, lists are split. */
export function requestFromFlags(flags: Record<string, unknown>): Partial<CrawlRequestInput> {
  const request: Record<string, unknown> = {};
  for (const { name, flag } of crawlFlagFields()) {
    const value = flags[flag];
    if (value === undefined || value === false) continue;
    request[name] = Array.isArray(value) ? splitList(value.map(String)) : value;
  }
  return request as Partial<CrawlRequestInput>;
}

/** API field names as the CLI spells them, for error messages: `max_depth` → `--depth`. */
export function cliFieldNames(): Array<[string, string]> {
  return crawlFlagFields().map(({ name, flag }) => [name, `--${flag}`]);
}
