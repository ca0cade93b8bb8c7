import { Flags } from '@oclif/core';
import { fieldFacts, splitList } from '../core/crawl-request.js';
import { ADD_FIELDS } from '../core/library-spec.js';
import type { AddFieldName, AddRequestInput } from '../core/library-spec.js';

/**
 * `docdex add`'s flags, derived from the add request's fields (`core/library-spec.ts`): a field with a flag
 * name is a flag with the field's description; its bounds are the request's to check, so the CLI reports a
 * bad value exactly as REST and MCP do.
 */

function flagFields(): Array<{ name: AddFieldName; flag: string }> {
  return (Object.keys(ADD_FIELDS) as AddFieldName[]).flatMap((name) => {
    const flag = ADD_FIELDS[name].flag;
    return flag === false ? [] : [{ name, flag }];
  });
}

function fieldFlag(name: AddFieldName) {
  const field = ADD_FIELDS[name];
  const type = fieldFacts(field.schema).type;
  if (type === 'boolean') return Flags.boolean({ description: field.description });
  if (type === 'integer' || type === 'number') return Flags.integer({ description: field.description });
  if (type === 'array') return Flags.string({ description: `${field.description.replace(/\.$/, '')} (repeatable or comma-separated).`, multiple: true });
  return Flags.string({ description: field.description });
}

export function addRequestFlags() {
  return Object.fromEntries(flagFields().map(({ name, flag }) => [flag, fieldFlag(name)]));
}

/** The request the flags and arguments give; absent flags stay absent. */
export function addRequestFromFlags(specs: string[], flags: Record<string, unknown>): AddRequestInput {
  const request: Record<string, unknown> = { specs };
  for (const { name, flag } of flagFields()) {
    const value = flags[flag];
    if (value === undefined) continue;
    request[name] = Array.isArray(value) ? splitList(value.map(String)) : value;
  }
  return request as AddRequestInput;
}
