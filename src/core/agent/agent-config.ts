import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { applyEdits, modify, parse, printParseErrorCode } from 'jsonc-parser';
import type { FormattingOptions, ParseError } from 'jsonc-parser';
import { z } from 'zod';
import { NotFoundError, UserError } from '../errors.js';
import type { AgentServerClient } from './agent-server-client.js';
import type { Workspace } from './workspace.js';

/**
 * The agent server's global configuration file (opencode's JSON with comments) in the workspace. Writes
 * change only the keys that changed, through jsonc-parser edits on the existing text, so the user's
 * comments and layout survive; the previous valid file is kept beside it as a last-known-good copy.
 */

const Model = z.string().regex(/^[^/\s]+\/\S+$/, 'expected "provider/model"');
const StringRecord = z.record(z.string(), z.string());

const ProviderConfig = z
  .object({
    npm: z.string().min(1).optional(),
    name: z.string().optional(),
    api: z.string().optional(),
    env: z.array(z.string()).optional(),
    options: z
      .object({
        baseURL: z.string().url().optional(),
        apiKey: z.string().optional(),
        headers: StringRecord.optional(),
        timeout: z.union([z.number().int().positive(), z.literal(false)]).optional(),
      })
      .loose()
      .optional(),
    models: z.record(z.string(), z.object({ name: z.string().optional(), id: z.string().optional() }).loose()).optional(),
    whitelist: z.array(z.string()).optional(),
    blacklist: z.array(z.string()).optional(),
  })
  .loose();

const Permission = z.union([z.enum(['ask', 'allow', 'deny']), z.record(z.string(), z.unknown())]);

const AgentDefinition = z
  .object({
    model: Model.optional(),
    prompt: z.string().optional(),
    description: z.string().optional(),
    mode: z.enum(['primary', 'subagent', 'all']).optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().min(0).max(1).optional(),
    tools: z.record(z.string(), z.boolean()).optional(),
    permission: z.record(z.string(), Permission).optional(),
    disable: z.boolean().optional(),
  })
  .loose();

const McpServer = z.union([
  z
    .object({
      type: z.literal('local'),
      command: z.array(z.string()).min(1),
      environment: StringRecord.optional(),
      enabled: z.boolean().optional(),
      timeout: z.number().int().positive().optional(),
    })
    .loose(),
  z
    .object({
      type: z.literal('remote'),
      url: z.string().url(),
      headers: StringRecord.optional(),
      enabled: z.boolean().optional(),
      timeout: z.number().int().positive().optional(),
    })
    .loose(),
]);

/** The keys docdex writes or reads, with opencode's rules for them. Every other key passes through. */
export const AgentConfigContent = z
  .object({
    $schema: z.string().optional(),
    theme: z.string().optional(),
    model: Model.optional(),
    small_model: Model.optional(),
    default_agent: z.string().min(1).optional(),
    username: z.string().optional(),
    autoupdate: z.union([z.boolean(), z.literal('notify')]).optional(),
    share: z.enum(['manual', 'auto', 'disabled']).optional(),
    snapshot: z.boolean().optional(),
    logLevel: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR']).optional(),
    shell: z.string().min(1).optional(),
    provider: z.record(z.string(), ProviderConfig).optional(),
    disabled_providers: z.array(z.string()).optional(),
    enabled_providers: z.array(z.string()).optional(),
    agent: z.record(z.string(), AgentDefinition).optional(),
    plugin: z.array(z.string().min(1)).optional(),
    skills: z.union([z.array(z.string()), z.record(z.string(), z.unknown())]).optional(),
    mcp: z.record(z.string(), McpServer).optional(),
    permission: z.union([z.enum(['ask', 'allow', 'deny']), z.record(z.string(), Permission)]).optional(),
    tools: z.record(z.string(), z.boolean()).optional(),
    instructions: z.array(z.string()).optional(),
    command: z.record(z.string(), z.object({ template: z.string(), description: z.string().optional(), agent: z.string().optional(), model: Model.optional() }).loose()).optional(),
    keybinds: StringRecord.optional(),
    // opencode takes true (its built-in formatters and language servers), false, or an object of overrides.
    formatter: z.union([z.boolean(), z.record(z.string(), z.unknown())]).optional(),
    lsp: z.union([z.boolean(), z.record(z.string(), z.unknown())]).optional(),
  })
  .loose();

export const ValidationIssue = z.object({ path: z.string(), message: z.string() }).meta({ id: 'AgentConfigValidationIssue' });
export type ValidationIssue = z.infer<typeof ValidationIssue>;

export const AgentConfigRecord = z
  .object({
    path: z.string().describe('Absolute path of the file'),
    content: z.record(z.string(), z.unknown()).describe('Parsed configuration'),
    rawContent: z.string().describe('Raw file text, comments included'),
    isValid: z.boolean(),
    validationIssues: z.array(ValidationIssue).optional(),
    updatedAt: z.number().describe('Milliseconds since the Unix epoch of the last write'),
    restartRequired: z.literal(true).optional().describe('PUT only: agent, plugin, skills or provider changed'),
    removedFields: z.array(z.string()).optional().describe('PUT only: fields the agent server dropped when patched live'),
    appliedLive: z.boolean().optional().describe('PUT only: whether the running agent server took the change'),
    liveError: z.string().optional().describe('PUT only: why the live patch failed (the file is written either way)'),
  })
  .meta({ id: 'AgentConfigFile' });
export type AgentConfigRecord = z.infer<typeof AgentConfigRecord>;

/** Top-level keys whose change needs an agent server restart instead of a live patch. */
export const RESTART_KEYS = ['agent', 'plugin', 'skills', 'provider'] as const;

const FILE_NAMES = ['opencode.jsonc', 'opencode.json', 'config.json'];
const LAST_KNOWN_GOOD_SUFFIX = '.last-known-good';

/** The agent-config file was rejected: HTTP 400 with validationIssues. */
export class AgentConfigRejectedError extends UserError {
  constructor(readonly validationIssues: ValidationIssue[]) {
    super(`The configuration was rejected: ${validationIssues[0]?.path || '(root)'}: ${validationIssues[0]?.message ?? 'invalid'}.`, {
      code: 'invalid_config',
      details: validationIssues,
    });
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function validateAgentConfig(content: unknown): ValidationIssue[] {
  if (!isPlainObject(content)) return [{ path: '', message: 'The configuration must be a JSON object.' }];
  const result = AgentConfigContent.safeParse(content);
  return result.success ? [] : result.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

/**
 * The file that exists, in opencode's order of names; the first name when none does. Anything at that
 * path counts as existing: a directory named opencode.jsonc is a broken workspace to report (500), not a
 * reason to write a second configuration file beside it.
 */
export async function agentConfigPath(ws: Workspace): Promise<{ file: string; exists: boolean }> {
  for (const name of FILE_NAMES) {
    const file = path.join(ws.agentConfigDir, name);
    if (
      await stat(file).then(
        () => true,
        (error: NodeJS.ErrnoException) => error.code !== 'ENOENT' && error.code !== 'ENOTDIR',
      )
    )
      return { file, exists: true };
  }
  return { file: path.join(ws.agentConfigDir, FILE_NAMES[0]!), exists: false };
}

export function lastKnownGoodPath(file: string): string {
  return `${file}${LAST_KNOWN_GOOD_SUFFIX}`;
}

interface ParsedFile {
  text: string;
  content: Record<string, unknown>;
  issues: ValidationIssue[];
  mtimeMs: number;
}

function lineCol(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `${before.length}:${(before.at(-1)?.length ?? 0) + 1}`;
}

function parseText(text: string): { content: Record<string, unknown>; issues: ValidationIssue[] } {
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    return { content: {}, issues: errors.map((e) => ({ path: '', message: `JSON syntax error ${printParseErrorCode(e.error)} at ${lineCol(text, e.offset)}` })) };
  }
  const content = isPlainObject(value) ? value : {};
  return { content, issues: validateAgentConfig(value) };
}

async function readParsed(file: string): Promise<ParsedFile | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const { mtimeMs } = await stat(file);
  return { text, ...parseText(text), mtimeMs };
}

function toRecord(file: string, parsed: ParsedFile): AgentConfigRecord {
  return {
    path: file,
    content: parsed.content,
    rawContent: parsed.text,
    isValid: parsed.issues.length === 0,
    ...(parsed.issues.length === 0 ? {} : { validationIssues: parsed.issues }),
    updatedAt: Math.round(parsed.mtimeMs),
  };
}

export async function readAgentConfig(ws: Workspace): Promise<AgentConfigRecord> {
  const { file } = await agentConfigPath(ws);
  const parsed = await readParsed(file);
  if (!parsed) throw new NotFoundError(`No agent configuration file in ${ws.agentConfigDir}.`, { hint: 'PUT /api/internal/agent-config creates it.' });
  return toRecord(file, parsed);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** Top-level keys that differ between two configurations (added, removed or changed). */
export function changedKeys(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((k) => !deepEqual(before[k], after[k])).sort();
}

function detectIndent(text: string): FormattingOptions {
  const m = /^( +|\t+)\S/m.exec(text);
  const unit = m?.[1] ?? '  ';
  return { insertSpaces: !unit.startsWith('\t'), tabSize: unit.startsWith('\t') ? 1 : unit.length, eol: text.includes('\r\n') ? '\r\n' : '\n' };
}

/** Edits `text` into `next`, key by key and recursing into objects, so untouched comments stay in place. */
export function editJsonc(text: string, before: Record<string, unknown>, next: Record<string, unknown>): string {
  const formattingOptions = detectIndent(text);
  let out = text;
  const walk = (prefix: string[], a: Record<string, unknown>, b: Record<string, unknown>): void => {
    for (const key of Object.keys(a)) {
      if (!Object.hasOwn(b, key)) out = applyEdits(out, modify(out, [...prefix, key], undefined, { formattingOptions }));
    }
    for (const key of Object.keys(b)) {
      const av = a[key];
      const bv = b[key];
      if (deepEqual(av, bv)) continue;
      if (isPlainObject(av) && isPlainObject(bv)) walk([...prefix, key], av, bv);
      else out = applyEdits(out, modify(out, [...prefix, key], bv, { formattingOptions }));
    }
  };
  walk([], before, next);
  return out;
}

async function writeAtomic(file: string, text: string): Promise<void> {
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    // Provider sections can hold API keys.
    await writeFile(tmp, text, { flag: 'wx', mode: 0o600 });
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

/** Names of fields in `sent` that are missing from `kept` (dotted paths), recursing into objects. */
export function missingFields(sent: Record<string, unknown>, kept: unknown, prefix = ''): string[] {
  if (!isPlainObject(kept)) return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(sent)) {
    const here = prefix ? `${prefix}.${key}` : key;
    if (!Object.hasOwn(kept, key)) out.push(here);
    else if (isPlainObject(value)) out.push(...missingFields(value, kept[key], here));
  }
  return out;
}

let writeChain: Promise<unknown> = Promise.resolve();

/**
 * PUT /agent-config. Validates the complete configuration (400 with validationIssues), keeps the current
 * file as last-known-good when it is valid, writes the new one, then either reports `restartRequired`
 * (agent, plugin, skills or provider changed: opencode reads those only at start) or applies the change
 * to the running agent server through PATCH /global/config (removed keys sent as null, which opencode
 * deletes).
 */
export interface WriteAgentConfigOptions {
  /**
   * Called with the file's current content (`{}` when there is none or it does not parse) and the new one,
   * inside the write queue, before anything is written; throwing refuses the write.
   */
  check?: (current: Record<string, unknown>, next: Record<string, unknown>) => void;
}

export async function writeAgentConfig(ws: Workspace, content: unknown, agentServer?: AgentServerClient, options: WriteAgentConfigOptions = {}): Promise<AgentConfigRecord> {
  const issues = validateAgentConfig(content);
  if (issues.length > 0) throw new AgentConfigRejectedError(issues);
  const next = content as Record<string, unknown>;
  // One write at a time in this process: two PUTs racing would each keep the other's file as last-known-good.
  const run = writeChain.then(async () => {
    const { file } = await agentConfigPath(ws);
    const current = await readParsed(file);
    options.check?.(current?.content ?? {}, next);
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const currentValid = current !== undefined && current.issues.length === 0;
    if (currentValid) await writeAtomic(lastKnownGoodPath(file), current.text);
    let text = `${JSON.stringify(next, null, 2)}\n`;
    if (currentValid) {
      const edited = editJsonc(current.text, current.content, next);
      const check = parseText(edited);
      // jsonc-parser edits are exact in practice; should one not be, the plain rendering is still correct.
      if (check.issues.length === 0 && deepEqual(check.content, next)) text = edited;
    }
    const changed = changedKeys(currentValid ? current.content : {}, next);
    const restartRequired = changed.some((k) => (RESTART_KEYS as readonly string[]).includes(k));
    let live: { appliedLive?: boolean; removedFields?: string[]; liveError?: string } = {};
    if (!restartRequired && changed.length > 0 && agentServer !== undefined) {
      // The patch must reach opencode BEFORE the file changes: opencode compares a patch with its file, and
      // a patch equal to the file is a no-op that leaves its cached config in place. A null deletes a key.
      const patch = Object.fromEntries(changed.map((k) => [k, Object.hasOwn(next, k) ? next[k] : null]));
      try {
        const answer = await agentServer.patchGlobalConfig(patch);
        const kept = Object.fromEntries(changed.filter((k) => Object.hasOwn(next, k)).map((k) => [k, next[k]]));
        const dropped = missingFields(kept, answer);
        live = { appliedLive: true, ...(dropped.length > 0 ? { removedFields: dropped } : {}) };
      } catch (error) {
        live = { appliedLive: false, liveError: (error as Error).message };
      }
    }
    await writeAtomic(file, text);
    const written = (await readParsed(file))!;
    const record = toRecord(file, written);
    if (restartRequired) return { ...record, restartRequired: true as const };
    return { ...record, ...live };
  });
  writeChain = run.catch(() => undefined);
  return run;
}
