import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'jsonc-parser';
import type pg from 'pg';
import { UserError } from '../errors.js';
import { DEFAULT_USER_ID, readSettings } from './settings.js';
import type { Workspace } from './workspace.js';

/**
 * What an agent may change in the agent server's configuration while sandbox enforcement is on (issue 30).
 *
 * Sandboxing moves only the bash tool into the microVM; MCP servers, formatters, language servers, plugins,
 * custom tools, slash-command shell templates and provider modules all run on the host, and permission rules
 * decide what the agent may do without asking. So every key is protected unless it is on the allow-list below,
 * which names keys that only choose models and looks: a key opencode adds in a later release is protected
 * until someone decides otherwise. The agent reaches the configuration only through the `mgr` tool (the
 * internal API); the user changes protected keys through the CLI (edit the file, `docdex agent restart`) or
 * the authenticated settings route.
 */

/** Top-level keys an agent may add, change or remove through mgr while enforcement is on. */
export const AGENT_WRITABLE_KEYS: readonly string[] = Object.freeze([
  '$schema',
  'theme',
  'model',
  'small_model',
  'default_agent',
  'username',
  'logLevel',
  'snapshot',
  'keybinds',
  'layout',
  'tool_output',
  'compaction',
  'disabled_providers',
  'enabled_providers',
]);

/** Top-level keys holding named agent definitions, of which only the fields below are writable. */
export const AGENT_DEFINITION_KEYS: readonly string[] = Object.freeze(['agent', 'mode']);

/** Fields of one agent definition an agent may change (never permission, tools, options or steps); `prompt` is text the model reads, no file. */
export const AGENT_WRITABLE_FIELDS: readonly string[] = Object.freeze(['model', 'variant', 'temperature', 'top_p', 'description', 'color', 'prompt']);

/** Why the rest is protected, for the error message and SECURITY.md. */
export const PROTECTED_REASONS: Readonly<Record<string, string>> = Object.freeze({
  mcp: 'local MCP servers are host processes',
  formatter: 'formatters are host processes',
  lsp: 'language servers are host processes',
  plugin: 'plugins are code loaded into the agent server on the host',
  provider: 'provider modules (npm) are code loaded on the host, and options redirect model traffic',
  permission: 'permission rules decide what runs without the user being asked',
  tools: 'tool switches re-enable tools the user turned off',
  command: 'slash-command templates run shell substitutions on the host',
  shell: 'the shell runs every command that is not the bash tool',
  experimental: 'experimental hooks and policies',
  agent: 'agent permission, tools and options decide what runs unasked (and prompts may not hold {env:}/{file:} substitutions)',
  mode: 'agent permission, tools and options decide what runs unasked (and prompts may not hold {env:}/{file:} substitutions)',
  server: 'the agent server address and CORS',
  share: 'sharing publishes sessions',
  autoupdate: 'updates download and run a new agent server',
  enterprise: 'sends sessions to another server',
  references: 'git references are cloned by host processes',
  reference: 'git references are cloned by host processes',
  skills: 'skill paths and URLs load instructions from outside the workspace',
  instructions:
    'instruction files are read on the host without a permission check: absolute, ~ and URL entries reach anywhere, and relative globs are matched from the session directory up to its worktree root (/ outside git), which from the assistant workspace reaches its SSH keys and provider credentials',
  watcher: 'file watching on the host',
});

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON with object keys sorted, so equal values give equal text (and digests) whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isPlainObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => value[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function same(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** Whether `key` is present in both or neither, with equal values: `null` is not the same as absent. */
function sameEntry(a: Record<string, unknown>, b: Record<string, unknown>, key: string): boolean {
  return Object.hasOwn(a, key) === Object.hasOwn(b, key) && same(a[key], b[key]);
}

/**
 * opencode replaces `{env:NAME}` and `{file:path}` in configuration text when it loads it: in any key, that
 * would put the agent server's environment (the hosting CLI token) or a host file outside the microVM (SSH
 * keys) into the model's context without a read permission being asked.
 */
const SUBSTITUTION = /\{(?:env|file):/i;

function holdsSubstitution(value: unknown): boolean {
  if (typeof value === 'string') return SUBSTITUTION.test(value);
  if (Array.isArray(value)) return value.some(holdsSubstitution);
  if (isPlainObject(value)) return Object.entries(value).some(([k, v]) => SUBSTITUTION.test(k) || holdsSubstitution(v));
  return false;
}

/** Whether an agent may set this value of a writable key or agent field. */
function isWritableValue(value: unknown): boolean {
  return !holdsSubstitution(value);
}

/** The part of one agent definition an agent may not change. */
function protectedDefinition(definition: unknown): unknown {
  if (!isPlainObject(definition)) return definition;
  return Object.fromEntries(Object.entries(definition).filter(([field, value]) => !(AGENT_WRITABLE_FIELDS.includes(field) && isWritableValue(value))));
}

/**
 * The configuration without what an agent may change: two configurations with equal projections start the
 * same host processes under the same permissions.
 */
export function protectedProjection(content: Record<string, unknown>): Record<string, unknown> {
  const out: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(content)) {
    if (AGENT_WRITABLE_KEYS.includes(key) && isWritableValue(value)) continue;
    if (AGENT_DEFINITION_KEYS.includes(key) && isPlainObject(value)) {
      out.push([key, Object.fromEntries(Object.entries(value).map(([name, definition]) => [name, protectedDefinition(definition)]))]);
    } else out.push([key, value]);
  }
  // fromEntries, not assignment: a key named __proto__ must stay a key.
  return Object.fromEntries(out);
}

/** Dotted paths of protected keys that `next` adds, changes or removes relative to `current`. */
export function protectedChanges(current: Record<string, unknown>, next: Record<string, unknown>): string[] {
  const before = protectedProjection(current);
  const after = protectedProjection(next);
  const changed: string[] = [];
  for (const key of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    if (sameEntry(before, after, key)) continue;
    // Name the entries of an object that changed (mcp.evil, permission.bash); a value that changed kind is the key.
    const left = Object.hasOwn(before, key) ? before[key] : {};
    const right = Object.hasOwn(after, key) ? after[key] : {};
    if (isPlainObject(left) && isPlainObject(right)) {
      const names = [...new Set([...Object.keys(left), ...Object.keys(right)])].sort().filter((name) => !sameEntry(left, right, name));
      changed.push(...(names.length > 0 ? names.map((name) => `${key}.${name}`) : [key]));
    } else changed.push(key);
  }
  return changed;
}

function reasonFor(keyPath: string): string {
  const top = keyPath.split('.')[0]!;
  if (AGENT_WRITABLE_KEYS.includes(top)) return 'its value holds an {env:} or {file:} substitution, which reads the host environment or files';
  return PROTECTED_REASONS[top] ?? 'only the keys that choose models and looks are open to the agent';
}

/** A change through an agent-reachable route to a protected key: HTTP 403. */
export class ProtectedConfigError extends UserError {
  constructor(
    readonly keys: string[],
    message?: string,
    details?: unknown[],
  ) {
    super(
      message ??
        `Sandbox enforcement is on: the agent cannot change "${keys[0]}" of the agent configuration through mgr (${reasonFor(keys[0]!)}). ` +
          'The user must change it: edit the configuration file and run `docdex agent restart` (CLI), or PUT /api/settings/agent-config (an authenticated UI call).',
      { code: 'forbidden', details: details ?? keys.map((key) => ({ path: key, reason: reasonFor(key) })) },
    );
  }
}

/** Refuses (403) a write that touches a protected key; `current` is the file as it is now. */
export function assertAgentMayWrite(current: Record<string, unknown>, next: Record<string, unknown>): void {
  const keys = protectedChanges(current, next);
  if (keys.length > 0) throw new ProtectedConfigError(keys);
}

/* ----------------------------- approval of what a reload may load ----------------------------- */

const CONFIG_FILE_NAMES = ['opencode.jsonc', 'opencode.json', 'config.json'];
/** Folders opencode loads code and prompts from: plugins, custom tools, commands, agents, modes. */
const CODE_DIRS = ['plugin', 'plugins', 'tool', 'tools', 'command', 'commands', 'agent', 'agents', 'mode', 'modes'];
/** Written by mgr-sandbox.js itself once loaded: a status report, never loaded by opencode. */
const IGNORED_FILES = new Set(['mgr-sandbox.report.json']);

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && !IGNORED_FILES.has(e.name) && !e.name.endsWith('.tmp'))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

async function configFileDigest(file: string): Promise<string | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const value: unknown = parse(text, [], { allowTrailingComma: true });
  // A file that is not an object is kept whole: opencode's reading of it is not ours to guess.
  return digest(isPlainObject(value) ? canonicalJson(protectedProjection(value)) : text);
}

/**
 * Digests of everything a reload of the agent server would load that can start host processes or loosen
 * permissions: the protected part of each configuration file opencode reads for the assistant (global and
 * workspace), and every file in the folders it loads plugins, tools, commands, agents and modes from.
 */
export async function protectedStateDigests(ws: Workspace): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const homeConfigDir = path.dirname(ws.stateDir);
  for (const dir of [ws.agentConfigDir, ws.assistantDir, homeConfigDir]) {
    for (const name of CONFIG_FILE_NAMES) {
      const file = path.join(dir, name);
      const value = await configFileDigest(file);
      if (value !== undefined) out[file] = value;
    }
  }
  for (const dir of [ws.agentConfigDir, homeConfigDir]) {
    for (const sub of CODE_DIRS) {
      for (const file of await filesUnder(path.join(dir, sub))) {
        const bytes = await readFile(file).catch(() => undefined);
        if (bytes !== undefined) out[file] = createHash('sha256').update(bytes).digest('hex');
      }
    }
  }
  return out;
}

/**
 * Whether agent-reachable routes must guard the configuration: the sandbox toggle, read per request from the
 * database every daemon shares. Guarding from the moment the user turns it on (before the agent server's
 * restart makes it effective) only refuses earlier; an agent cannot turn it off (PATCH /settings rejects it).
 */
export async function agentConfigGuarded(pool: pg.Pool): Promise<boolean> {
  const { preferences } = await readSettings(pool, DEFAULT_USER_ID);
  return preferences.sandbox.enabled === true;
}

/**
 * Records everything as approved: at an agent server start, which loads all of it anyway, so a later reload
 * through mgr loads nothing that is not already running.
 */
export async function approveAgentConfigState(pool: pg.Pool, ws: Workspace): Promise<void> {
  await saveApprovedDigests(pool, await protectedStateDigests(ws));
}

/**
 * Records one configuration file the user has just written as approved, and nothing else: a plugin an agent
 * dropped into a folder stays unapproved however often the user saves the configuration.
 */
export async function approveAgentConfigFile(pool: pg.Pool, file: string): Promise<void> {
  const approved = { ...(await readApprovedDigests(pool)) };
  const value = await configFileDigest(file);
  if (value === undefined) delete approved[file];
  else approved[file] = value;
  await saveApprovedDigests(pool, approved);
}

async function saveApprovedDigests(pool: pg.Pool, digests: Record<string, string>): Promise<void> {
  await pool.query(
    `INSERT INTO agent_config_approval (singleton, digests, approved_at) VALUES (true, $1, now())
     ON CONFLICT (singleton) DO UPDATE SET digests = EXCLUDED.digests, approved_at = now()`,
    [JSON.stringify(digests)],
  );
}

async function readApprovedDigests(pool: pg.Pool): Promise<Record<string, string> | undefined> {
  const { rows } = await pool.query<{ digests: Record<string, string> }>('SELECT digests FROM agent_config_approval WHERE singleton');
  return rows[0]?.digests;
}

/**
 * Refuses (403) a reload asked for by an agent when it would load protected configuration the user has not
 * approved: a file changed, added or removed since the last user write or agent server start.
 */
export async function assertReloadApproved(pool: pg.Pool, ws: Workspace): Promise<void> {
  const approved = (await readApprovedDigests(pool)) ?? {};
  const now = await protectedStateDigests(ws);
  const changed = [...new Set([...Object.keys(approved), ...Object.keys(now)])].filter((file) => approved[file] !== now[file]).sort();
  if (changed.length === 0) return;
  throw new ProtectedConfigError(
    changed,
    `Sandbox enforcement is on: the agent cannot reload the agent server through mgr, because ${path.relative(ws.root, changed[0]!) || changed[0]} changed since the user approved the configuration ` +
      '(protected keys, plugins, tools, commands or agents would be loaded). The user must approve it: run `docdex agent restart` (CLI), or save the configuration with PUT /api/settings/agent-config (an authenticated UI call).',
    changed.map((file) => ({ path: file, reason: 'changed since the user approved it' })),
  );
}
