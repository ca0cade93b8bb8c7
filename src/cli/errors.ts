import { stripVTControlCharacters } from 'node:util';
import { UserError, isUserError } from '../core/errors.js';
import { editDistance } from '../core/edit-distance.js';
import { cliFieldNames } from './request-flags.js';

/**
 * The CLI's one error format, shared by the base command (errors of a command, including flag and argument
 * parsing) and the command_not_found hook (errors before any command runs): with --json one object
 * `{error, code, hint}` on stdout, otherwise an `Error:` line and a `Hint:` line on stderr.
 */

/** The code of a command line oclif could not parse (unknown flag, missing argument, bad flag value). */
export const USAGE_ERROR = 'usage_error';

/** API field names as the CLI spells them: one table, so every message a CLI user reads names flags. */
const CLI_NAMES: Array<[RegExp, string | ((match: string, index?: string) => string)]> = [
  [/\bstart_urls\.(\d+)/g, (_match, index) => `URL ${Number(index) + 1}`],
  [/\bstart_urls\b/g, 'start URLs'],
  // Every crawl request field the CLI spells differently as a flag (max_depth is --depth). A field spelled the
  // same (name, version) is left alone: the word also appears in other messages ("Invalid skill name").
  ...cliFieldNames()
    .filter(([field, flag]) => flag !== `--${field}`)
    .map(([field, flag]): [RegExp, string] => [new RegExp(`\\b${field}\\b`, 'g'), flag]),
];

export function withCliNames(text: string): string {
  return CLI_NAMES.reduce((out, [pattern, name]) => (typeof name === 'string' ? out.replace(pattern, name) : out.replace(pattern, name)), text);
}

/** True when argv asks for JSON output (`--json` before any `--`). */
export function wantsJson(argv: readonly string[]): boolean {
  const json = argv.indexOf('--json');
  const end = argv.indexOf('--');
  return json !== -1 && (end === -1 || json < end);
}

export function isDebugEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return /(^|[,\s])docdex/.test(env.DEBUG ?? '');
}

/** The stack and every cause's stack, for DEBUG=docdex*. */
export function debugTrace(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    parts.push(`${depth === 0 ? '' : 'Caused by: '}${current.stack ?? current.message}`);
    current = current.cause;
  }
  return parts.join('\n');
}

/** An oclif parse error's text, cleaned: no "See more help" line, no colours, one line. */
function usageMessage(error: Error): string {
  const text = stripVTControlCharacters(error.message)
    .replace(/\nSee more help with --help/g, '')
    .replace(/^Parsing (--[\w-]+) \n\t/, '$1: ')
    .replace(/^The following errors? occurred:\s*/, '');
  const lines = text
    .split('\n')
    .map((line) => line.replace(/^\s*›?\s*/, '').trim())
    .filter(Boolean);
  return lines.join('; ').replace(/:;/g, ':');
}

/** A parse error of `commandId` as a UserError: exit 2, and a hint pointing at the command's help. */
export function toUsageError(error: Error, commandId: string | undefined, flagNames: readonly string[] = []): UserError {
  const command = commandId ? `docdex ${commandId.replaceAll(':', ' ')}` : 'docdex';
  const message = usageMessage(error);
  const help = `Run \`${command} --help\` for its arguments and flags.`;
  // oclif's error for unknown flags carries them as typed (`--sourc`, `--sourc=x`): name the flags meant.
  const unknown = 'flags' in error && Array.isArray(error.flags) ? (error.flags as unknown[]).filter((f): f is string => typeof f === 'string') : [];
  const meant = [...new Set(unknown.flatMap((typed) => closestFlag(typed, flagNames) ?? []))];
  return new UserError(message, {
    code: isUserError(error) ? error.code : USAGE_ERROR,
    exitCode: 2,
    hint: isUserError(error) && error.hint ? error.hint : meant.length > 0 ? `Did you mean ${meant.map((f) => `\`--${f}\``).join(' or ')}? ${help}` : help,
    cause: error,
  });
}

/** The flag name closest to a mistyped one (`--sourc` → `source`), or none within about one edit per three letters. */
export function closestFlag(typed: string, flagNames: readonly string[]): string | undefined {
  const wanted = typed.replace(/^-+/, '').split('=')[0]!.toLowerCase();
  if (wanted.length < 2) return undefined;
  const limit = Math.max(1, Math.min(2, Math.floor(wanted.length / 3)));
  let best: { name: string; distance: number } | undefined;
  for (const name of flagNames) {
    const distance = name.startsWith(wanted) && wanted.length >= 3 ? 0.5 : editDistance(wanted, name, limit);
    if (distance <= limit && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** Writes a UserError in the one format; the caller exits with `error.exitCode`. */
export function renderUserError(error: UserError, options: { json: boolean }): void {
  if (isDebugEnabled()) process.stderr.write(`${debugTrace(error)}\n`);
  const message = withCliNames(error.message);
  const hint = error.hint === undefined ? undefined : withCliNames(error.hint);
  if (options.json) {
    const body = { error: message, code: error.code, ...(hint ? { hint } : {}), ...(error.details ? { details: error.details } : {}) };
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    return;
  }
  // One unwrapped line for the error and one for the next step, so scripts can grep them.
  process.stderr.write(`Error: ${message}\n${hint ? `Hint: ${hint}\n` : ''}`);
}

/**
 * The commands closest to what was typed, written as a user types them (`crawl list`). Each command id is
 * compared with as many typed words as it has, so `serach json` finds `search` and `crawl lsit` finds
 * `crawl list`.
 */
export function closestCommands(typed: readonly string[], commandIds: readonly string[], max = 3): string[] {
  const scored: Array<{ id: string; distance: number }> = [];
  for (const id of commandIds) {
    const parts = id.split(':');
    if (parts.length > typed.length) continue;
    const wanted = typed.slice(0, parts.length).join(' ').toLowerCase();
    const name = parts.join(' ');
    // Typos of short words are cheap to make: allow about one edit per three letters of the last word.
    const limit = Math.max(1, Math.min(2, Math.floor(parts.at(-1)!.length / 3)));
    const distance = editDistance(wanted, name, limit);
    if (distance <= limit) scored.push({ id: name, distance });
  }
  scored.sort((a, b) => a.distance - b.distance || a.id.localeCompare(b.id));
  return scored.slice(0, max).map((s) => s.id);
}

/** How many typed words name the command: every word that names a topic, and the one after. */
function commandWordCount(words: readonly string[], commandIds: readonly string[]): number {
  let count = 0;
  while (count < words.length - 1 && commandIds.some((id) => id.startsWith(`${words.slice(0, count + 1).join(':')}:`))) count++;
  return Math.min(words.length, count + 1);
}

/** The error for a command that does not exist, with the closest ones as its hint. */
export function unknownCommandError(typed: readonly string[], commandIds: readonly string[]): UserError {
  const words = typed.filter((w) => !w.startsWith('-'));
  if (words.length === 0) {
    return new UserError(`Unknown flag: ${typed.join(' ') || '(none)'}.`, { code: USAGE_ERROR, hint: 'Run `docdex --help` for the list of commands.' });
  }
  const named = words.slice(0, commandWordCount(words, commandIds));
  const close = closestCommands(words, commandIds);
  const topic = named.slice(0, -1).join(' ');
  const hint = close.length > 0 ? `Did you mean ${close.map((c) => `\`docdex ${c}\``).join(' or ')}?` : `Run \`docdex ${topic ? `${topic} ` : ''}--help\` for the list of commands.`;
  return new UserError(`Unknown command: docdex ${named.join(' ')}.`, { code: 'unknown_command', hint });
}
