import type pg from 'pg';
import { z } from 'zod';
import { UserError, ValidationError } from '../errors.js';
import { withTransaction } from '../db/transaction.js';

/**
 * Per-user preferences of the agent manager (the spec's Preferences object). Only the keys a user changed
 * are stored; everything else comes from DEFAULT_PREFERENCES at read time, so a new default reaches users
 * who never touched it. Secrets (git credential tokens, tts/stt API keys) are stored here but never leave
 * through `readSettings`.
 */

export const DEFAULT_USER_ID = 'default';
export const UserId = z
  .string()
  .regex(/^[A-Za-z0-9._@-]{1,128}$/, 'userId is 1-128 letters, digits, ".", "_", "@" or "-"')
  .describe("The user whose settings to use; 'default' when omitted");

const optionalText = (max: number) => z.string().min(1).max(max).nullable();

const TtsPatch = z
  .object({
    enabled: z.boolean(),
    provider: z.string().min(1).max(100),
    autoPlay: z.boolean(),
    voice: z.string().min(1).max(100),
    model: z.string().min(1).max(200),
    speed: z.number().min(0.25).max(4),
  })
  .partial()
  .strict();

const SttPatch = z
  .object({
    enabled: z.boolean(),
    provider: z.string().min(1).max(100),
    model: z.string().min(1).max(200),
    language: z.string().min(1).max(35),
  })
  .partial()
  .strict();

const CustomCommand = z.object({
  name: z.string().min(1).max(64),
  description: z.string().max(500),
  promptTemplate: z.string().min(1).max(20_000),
});

/** PATCH /settings: each allowed key with its value rule. `null` clears an optional key. */
export const PreferencesPatch = z
  .object({
    theme: z.enum(['dark', 'light', 'system']),
    mode: z.enum(['plan', 'build']),
    defaultModel: optionalText(200),
    defaultAgent: optionalText(100),
    autoScroll: z.boolean(),
    expandDiffs: z.boolean(),
    expandToolCalls: z.boolean(),
    showReasoning: z.boolean(),
    simpleChatMode: z.boolean(),
    leaderKey: optionalText(32),
    directShortcuts: z.array(z.string().min(1).max(64)).max(100).nullable(),
    keyboardShortcuts: z.record(z.string().min(1).max(100), z.string().max(100)),
    customCommands: z.array(CustomCommand).max(100),
    notifications: z.object({ enabled: z.boolean() }).partial().loose(),
    repoOrder: z.array(z.number().int().positive()).max(10_000).nullable(),
    repoSortMode: z.enum(['recent', 'manual', 'name']),
    tts: TtsPatch,
    stt: SttPatch,
  })
  .partial()
  .strict()
  .meta({ id: 'AgentPreferencesPatch' });
export type PreferencesPatch = z.infer<typeof PreferencesPatch>;

export const ALLOWED_PATCH_KEYS = Object.keys(PreferencesPatch.shape) as (keyof PreferencesPatch)[];
/** Keys that exist but are never writable through PATCH /settings (secrets and manager-owned state). */
export const REJECTED_PATCH_KEYS = ['gitCredentials', 'gitIdentity', 'tts.apiKey', 'tts.endpoint', 'stt.apiKey', 'stt.endpoint', 'lastKnownGoodConfig'] as const;

export const Preferences = z
  .object({
    theme: z.enum(['dark', 'light', 'system']),
    mode: z.enum(['plan', 'build']),
    defaultModel: z.string().optional(),
    defaultAgent: z.string().optional(),
    autoScroll: z.boolean(),
    expandDiffs: z.boolean(),
    expandToolCalls: z.boolean(),
    showReasoning: z.boolean(),
    simpleChatMode: z.boolean(),
    leaderKey: z.string().optional(),
    directShortcuts: z.array(z.string()).optional(),
    keyboardShortcuts: z.record(z.string(), z.string()),
    customCommands: z.array(CustomCommand),
    notifications: z.object({ enabled: z.boolean() }).loose(),
    repoOrder: z.array(z.number()).optional(),
    repoSortMode: z.enum(['recent', 'manual', 'name']),
    gitCredentials: z
      .array(z.object({ id: z.string(), host: z.string(), username: z.string().optional(), repoId: z.number().optional(), hasToken: z.boolean() }).loose())
      .describe('Read-only here; tokens are never returned'),
    gitIdentity: z.object({ name: z.string().optional(), email: z.string().optional() }).loose().describe('Read-only here'),
    tts: z.object({ enabled: z.boolean(), configured: z.boolean() }).loose().describe('apiKey and endpoint are never returned'),
    stt: z.object({ enabled: z.boolean(), configured: z.boolean() }).loose().describe('apiKey and endpoint are never returned'),
    sandbox: z.object({ enabled: z.boolean(), gitCredentials: z.boolean() }).describe('Read-only here; changed in the manager settings'),
    defaultGitCredentialId: z.string().nullable().optional().describe('Read-only: the default git credential'),
  })
  .meta({ id: 'AgentPreferences' });
export type Preferences = z.infer<typeof Preferences>;

export const SettingsEnvelope = z.object({ preferences: Preferences, updatedAt: z.number().describe('Milliseconds since the Unix epoch of the last change') }).meta({ id: 'AgentSettings' });
export type SettingsEnvelope = z.infer<typeof SettingsEnvelope>;

type Stored = Record<string, unknown>;

export const DEFAULT_PREFERENCES = {
  theme: 'system',
  mode: 'build',
  autoScroll: true,
  expandDiffs: false,
  expandToolCalls: false,
  showReasoning: false,
  simpleChatMode: false,
  keyboardShortcuts: {},
  customCommands: [],
  notifications: { enabled: false },
  repoSortMode: 'recent',
  gitCredentials: [],
  gitIdentity: {},
  tts: { enabled: false },
  stt: { enabled: false },
  sandbox: { enabled: false, gitCredentials: false },
} as const;

/** Objects merged key by key with their defaults and with PATCH bodies; every other key is replaced whole. */
const MERGED_OBJECTS = new Set(['notifications', 'tts', 'stt', 'sandbox', 'gitIdentity']);
const SECRET_KEY = /^(apiKey|endpoint|token|password|secret|privateKey|accessToken)$/i;
/** Stored preferences larger than this are refused: they are read on every settings request. */
const MAX_STORED_BYTES = 256 * 1024;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function withoutSecrets(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([k]) => !SECRET_KEY.test(k)));
}

export function isSpeechConfigured(value: unknown): boolean {
  return isPlainObject(value) && ((typeof value.apiKey === 'string' && value.apiKey !== '') || (typeof value.endpoint === 'string' && value.endpoint !== ''));
}

/** The stored overrides merged over the defaults, with every secret removed. */
export function presentPreferences(stored: Stored): Preferences {
  const merged: Record<string, unknown> = { ...DEFAULT_PREFERENCES };
  for (const [key, value] of Object.entries(stored)) {
    if (key === 'lastKnownGoodConfig') continue;
    const base = merged[key];
    merged[key] = MERGED_OBJECTS.has(key) && isPlainObject(base) && isPlainObject(value) ? { ...base, ...value } : value;
  }
  const credentials = Array.isArray(merged.gitCredentials) ? merged.gitCredentials : [];
  merged.gitCredentials = credentials.filter(isPlainObject).map((c) => ({
    ...withoutSecrets(c),
    hasToken: typeof c.token === 'string' && c.token !== '',
  }));
  merged.gitIdentity = withoutSecrets(merged.gitIdentity as Record<string, unknown>);
  for (const kind of ['tts', 'stt'] as const) {
    const raw = merged[kind] as Record<string, unknown>;
    merged[kind] = { ...withoutSecrets(raw), configured: isSpeechConfigured(raw) };
  }
  return merged as Preferences;
}

async function loadStored(client: pg.Pool | pg.PoolClient, userId: string, lock = false): Promise<{ stored: Stored; updatedAt: number }> {
  const { rows } = await client.query<{ preferences: Stored; updated_at: Date }>(`SELECT preferences, updated_at FROM agent_settings WHERE user_id = $1${lock ? ' FOR UPDATE' : ''}`, [userId]);
  const row = rows[0];
  // A user who never saved anything has the defaults, dated at the epoch.
  return row ? { stored: row.preferences, updatedAt: row.updated_at.getTime() } : { stored: {}, updatedAt: 0 };
}

export async function readSettings(pool: pg.Pool, userId = DEFAULT_USER_ID): Promise<SettingsEnvelope> {
  const { stored, updatedAt } = await loadStored(pool, userId);
  return { preferences: await withGitCredentials(pool, userId, presentPreferences(stored)), updatedAt };
}

/**
 * Git credentials live in their own table (`docdex manager git-credentials`), never in the preferences JSON;
 * settings show them read-only, without tokens, plus which one is the default.
 */
async function withGitCredentials(pool: pg.Pool, userId: string, preferences: Preferences): Promise<Preferences> {
  const { rows } = await pool.query<{ id: string; host: string; username: string | null; repo_id: number | null; is_default: boolean }>(
    'SELECT id, host, username, repo_id, is_default FROM agent_git_credentials WHERE user_id = $1 ORDER BY host, created_at, id',
    [userId],
  );
  if (rows.length === 0) return { ...preferences, defaultGitCredentialId: null };
  return {
    ...preferences,
    gitCredentials: rows.map((r) => ({
      id: r.id,
      host: r.host,
      ...(r.username === null ? {} : { username: r.username }),
      ...(r.repo_id === null ? {} : { repoId: r.repo_id }),
      isDefault: r.is_default,
      hasToken: true,
    })),
    defaultGitCredentialId: rows.find((r) => r.is_default)?.id ?? null,
  };
}

/** The raw stored preferences, secrets included: for manager-side code (credential forwarding, speech). */
export async function readStoredPreferences(pool: pg.Pool, userId = DEFAULT_USER_ID): Promise<Stored> {
  return (await loadStored(pool, userId)).stored;
}

function badRequest(message: string, details: unknown[] = []): UserError {
  return new UserError(message, { code: 'bad_request', details });
}

/**
 * Checks the keys of a PATCH body before its values: a rejected or unknown key is a 400 that names the
 * key, so a client (or an agent through the mgr tool) learns exactly which key to drop.
 */
export function assertPatchKeys(body: unknown): asserts body is Record<string, unknown> {
  if (!isPlainObject(body)) throw badRequest('The body must be a JSON object of preference keys.');
  for (const key of Object.keys(body)) {
    if ((REJECTED_PATCH_KEYS as readonly string[]).includes(key)) {
      throw badRequest(`Preference key "${key}" cannot be written through this API.`, [{ key, reason: 'restricted' }]);
    }
    if (!(ALLOWED_PATCH_KEYS as string[]).includes(key)) {
      throw badRequest(`Unknown preference key "${key}". Allowed keys: ${ALLOWED_PATCH_KEYS.join(', ')}.`, [{ key, reason: 'unknown' }]);
    }
    if ((key === 'tts' || key === 'stt') && isPlainObject(body[key])) {
      const allowed = Object.keys((key === 'tts' ? TtsPatch : SttPatch).shape);
      for (const inner of Object.keys(body[key])) {
        const dotted = `${key}.${inner}`;
        if ((REJECTED_PATCH_KEYS as readonly string[]).includes(dotted)) {
          throw badRequest(`Preference key "${dotted}" cannot be written through this API.`, [{ key: dotted, reason: 'restricted' }]);
        }
        if (!allowed.includes(inner)) {
          throw badRequest(`Unknown preference key "${dotted}". Allowed keys: ${allowed.map((k) => `${key}.${k}`).join(', ')}.`, [{ key: dotted, reason: 'unknown' }]);
        }
      }
    }
  }
}

/** Validates a PATCH body (keys first, then values) and returns it typed. Throws UserError code bad_request. */
export function parsePreferencesPatch(body: unknown): PreferencesPatch {
  assertPatchKeys(body);
  const parsed = PreferencesPatch.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.join('.') || 'body';
    throw badRequest(
      `Invalid value for "${where}": ${issue.message}.`,
      parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    );
  }
  return parsed.data;
}

async function inTransaction(pool: pg.Pool, userId: string, change: (stored: Stored) => Stored): Promise<SettingsEnvelope> {
  const { next, updatedAt } = await withTransaction(pool, async (client) => {
    await client.query(`INSERT INTO agent_settings (user_id, updated_at) VALUES ($1, 'epoch') ON CONFLICT (user_id) DO NOTHING`, [userId]);
    const { stored } = await loadStored(client, userId, true);
    const changed = change(stored);
    const text = JSON.stringify(changed);
    if (Buffer.byteLength(text) > MAX_STORED_BYTES) throw badRequest(`Preferences are limited to ${MAX_STORED_BYTES / 1024} KB.`);
    const { rows } = await client.query<{ updated_at: Date }>(
      // Strictly increasing, so two quick PATCHes never report the same updatedAt.
      `UPDATE agent_settings SET preferences = $2::jsonb, updated_at = greatest(clock_timestamp(), updated_at + interval '1 millisecond')
        WHERE user_id = $1 RETURNING updated_at`,
      [userId, text],
    );
    return { next: changed, updatedAt: rows[0]!.updated_at.getTime() };
  });
  return { preferences: await withGitCredentials(pool, userId, presentPreferences(next)), updatedAt };
}

/**
 * Applies a validated PATCH. tts and stt can only be changed once the feature is configured (it has an
 * API key or endpoint), because enabling a speech feature with nowhere to send audio would fail later
 * and far from the cause.
 */
export async function patchSettings(pool: pg.Pool, userId: string, patch: PreferencesPatch): Promise<SettingsEnvelope> {
  return inTransaction(pool, userId, (stored) => {
    const next: Stored = { ...stored };
    for (const [key, value] of Object.entries(patch)) {
      if (value === undefined) continue;
      if ((key === 'tts' || key === 'stt') && !isSpeechConfigured(stored[key])) {
        throw badRequest(
          `${key} is not configured: the user sets up ${key === 'tts' ? 'text-to-speech' : 'speech-to-text'} first, with \`docdex manager speech set ${key}\` or PUT /api/settings/speech/${key} (neither is reachable through the mgr tool); "${key}" can be changed here after that.`,
          [{ key, reason: 'not_configured' }],
        );
      }
      if (value === null) delete next[key];
      else if (MERGED_OBJECTS.has(key) && isPlainObject(stored[key])) next[key] = { ...stored[key], ...(value as object) };
      else next[key] = value;
    }
    return next;
  });
}

export const SpeechKind = z.enum(['tts', 'stt']).describe('tts: text-to-speech; stt: speech-to-text');
export type SpeechKind = z.infer<typeof SpeechKind>;

/**
 * A speech service as the user configures it (`docdex manager speech set`, PUT /api/settings/speech/:kind).
 * docdex itself sends no audio: the settings are for clients of the settings API. The API key and endpoint
 * are secrets here and never leave through GET /settings.
 */
export const SpeechService = z
  .object({
    provider: z.string().trim().min(1).max(100),
    endpoint: z
      .url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' })
      .max(2000)
      .optional(),
    apiKey: z.string().min(1).max(4096).optional(),
    model: z.string().trim().min(1).max(200).optional(),
  })
  .strict()
  .refine((service) => service.apiKey !== undefined || service.endpoint !== undefined, { message: 'needs an API key or an endpoint', path: ['apiKey'] })
  .meta({ id: 'SpeechService' });
export type SpeechService = z.infer<typeof SpeechService>;

/** Configures a speech feature with its secret parts, or removes it (`null`). PATCH /settings never reaches these. */
export async function configureSpeech(pool: pg.Pool, userId: string, kind: SpeechKind, service: SpeechService | null): Promise<SettingsEnvelope> {
  const checked = service === null ? null : SpeechService.safeParse(service);
  if (checked !== null && !checked.success) {
    const issue = checked.error.issues[0]!;
    throw new ValidationError(`Invalid ${kind} setting ${issue.path.join('.') || 'value'}: ${issue.message}.`, {
      hint: 'Give a provider and an API key (read from standard input) or an endpoint URL.',
      details: checked.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return inTransaction(pool, userId, (stored) => {
    const next = { ...stored };
    if (checked === null) delete next[kind];
    else next[kind] = { ...(isPlainObject(stored[kind]) ? stored[kind] : {}), ...checked.data };
    return next;
  });
}

/**
 * Sets the sandbox toggles. Manager settings only (the CLI, `PUT /api/settings/sandbox`, the dashboard): an agent
 * must not be able to turn its own sandbox off, so PATCH /api/internal/settings refuses the key. Only an agent
 * server (re)start applies `enabled` (core/sandbox/enforcement.ts); `gitCredentials` applies to the next command.
 */
export async function setSandboxPreferences(pool: pg.Pool, userId: string, sandbox: { enabled?: boolean; gitCredentials?: boolean }): Promise<SettingsEnvelope> {
  return inTransaction(pool, userId, (stored) => ({
    ...stored,
    sandbox: { ...(isPlainObject(stored.sandbox) ? stored.sandbox : {}), ...sandbox },
  }));
}

// Control characters would end up in GIT_AUTHOR_* inside the guest and in git's commit headers.
const identityText = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    // eslint-disable-next-line no-control-regex
    .refine((value) => !/[\u0000-\u001f\u007f]/.test(value), 'must not contain control characters');

/** The commit identity forwarded into the sandbox as GIT_AUTHOR_* and GIT_COMMITTER_* (forwarding rule 3). */
export const GitIdentity = z
  .object({
    name: identityText(200).describe('GIT_AUTHOR_NAME and GIT_COMMITTER_NAME'),
    email: identityText(254)
      .refine((value) => /^[^\s@<>]+@[^\s@<>]+$/.test(value), 'must look like name@host')
      .describe('GIT_AUTHOR_EMAIL and GIT_COMMITTER_EMAIL'),
  })
  .strict()
  .meta({ id: 'GitIdentity' });
export type GitIdentity = z.infer<typeof GitIdentity>;

/**
 * Sets the git identity (`null` clears it). Like the sandbox toggles, manager settings only: PATCH
 * /api/internal/settings refuses `gitIdentity`. Applies to the next sandboxed command, no restart needed.
 */
export async function setGitIdentity(pool: pg.Pool, userId: string, identity: GitIdentity | null): Promise<SettingsEnvelope> {
  const parsed = identity === null ? null : GitIdentity.safeParse(identity);
  if (parsed !== null && !parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ValidationError(`Invalid git identity ${issue.path.join('.') || 'value'}: ${issue.message}.`, {
      hint: 'Give a name and an e-mail address, e.g. --name "Ada Lovelace" --email ada@example.com.',
      details: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return inTransaction(pool, userId, (stored) => {
    const next = { ...stored };
    if (parsed === null) delete next.gitIdentity;
    else next.gitIdentity = parsed.data;
    return next;
  });
}
