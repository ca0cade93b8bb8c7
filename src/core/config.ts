import { availableParallelism, homedir } from 'node:os';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { TokenScopeConflict, parseAuthTokenEntry, parseAuthTokens } from './auth-token.js';
import type { AuthToken } from './auth-token.js';
import { UserError } from './errors.js';
import { parseAllowHosts } from './net/policy.js';
import type { AllowEntry } from './net/policy.js';

/**
 * Every environment variable docdex reads, in one schema. Commands and the daemon call `loadConfig()` once;
 * nothing else reads process.env for settings, so the README's configuration table can be checked against
 * this file.
 */

const bool = (defaultValue: boolean) =>
  z
    .string()
    .trim()
    .toLowerCase()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return defaultValue;
      if (['true', '1', 'yes', 'on'].includes(v)) return true;
      if (['false', '0', 'no', 'off'].includes(v)) return false;
      ctx.addIssue({ code: 'custom', message: 'expected true or false' });
      return z.NEVER;
    });

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

const port = (defaultValue: number | undefined) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return defaultValue;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 65535) {
        ctx.addIssue({ code: 'custom', message: 'expected a port number from 1 to 65535' });
        return z.NEVER;
      }
      return n;
    });

const number = (defaultValue: number, min: number, max: number, what: string, integer = false) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return defaultValue;
      const n = Number(v);
      if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
        ctx.addIssue({ code: 'custom', message: `expected ${integer ? 'a whole number' : 'a number'} ${what}` });
        return z.NEVER;
      }
      return n;
    });

const url = (schemes: string[]) =>
  optionalString.transform((v, ctx) => {
    if (v === undefined) return undefined;
    try {
      const parsed = new URL(v);
      if (!schemes.includes(parsed.protocol.replace(/:$/, ''))) throw new Error('scheme');
      return v;
    } catch {
      ctx.addIssue({ code: 'custom', message: `expected a URL starting with ${schemes.map((s) => `${s}://`).join(' or ')}` });
      return z.NEVER;
    }
  });

const list = optionalString.transform((v) =>
  v === undefined
    ? []
    : v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
);

// A Host header value: a name, an IPv4 literal or a bracketed IPv6 literal, with an optional port.
const HOST_ENTRY = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}))(?::\d{1,5})?$/;

/** Bearer tokens shorter than this are refused at config load: short tokens can be guessed. */
export const MIN_TOKEN_LENGTH = 32;

// Parsed once here so a typo fails at startup, not as a refused crawl later.
const allowHosts = optionalString.transform((v, ctx) => {
  try {
    return parseAllowHosts(v);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `${(error as Error).message}; expected comma-separated CIDRs and host names` });
    return z.NEVER;
  }
});

const envSchema = z.object({
  DATABASE_URL: url(['postgres', 'postgresql']),
  DB_HOST: optionalString,
  DB_PORT: port(5432),
  DB_NAME: optionalString,
  DB_USER: optionalString,
  DB_PASSWORD: optionalString,
  DOCDEX_HOME: optionalString,
  XDG_DATA_HOME: optionalString,
  // Chromium for client-rendered pages; else chromium or chromium-browser on PATH (core/render/browser.ts).
  DOCDEX_CHROMIUM: optionalString,
  // Index packs installed at `serve`/`worker` start, and the most a pack may unpack to (core/pack/).
  DOCDEX_PACKS_DIR: optionalString,
  DOCDEX_PACK_MAX_MB: number(4096, 1, 1_000_000, 'from 1 to 1000000', true),

  API_HOST: optionalString.transform((v) => v ?? '127.0.0.1'),
  API_PORT: port(7654),
  API_CORS_ORIGINS: list,
  // Host header values the daemon answers besides its own addresses (a reverse proxy's name): host or host:port.
  API_ALLOWED_HOSTS: list.pipe(z.array(z.string().regex(HOST_ENTRY, 'expected host names or host:port, comma-separated'))),
  API_AUTH: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? undefined : v))
    .pipe(bool(false).optional()),

  CODE_ENABLE_LLM_EXTRACTION: bool(false),
  CODE_LLM_API_KEY: optionalString,
  CODE_LLM_EXTRACTION_MODEL: optionalString,
  CODE_LLM_BASE_URL: url(['http', 'https']),
  CODE_LLM_EXTRACTION_MODE: optionalString,
  CODE_LLM_MAX_CONCURRENCY: number(4, 1, 64, 'from 1 to 64', true),
  CODE_LLM_JOB_MAX_CALLS: number(500, 0, 1_000_000, 'from 0 (no limit) to 1000000', true),
  CODE_LLM_JOB_MAX_TOKENS: number(1_000_000, 0, 1_000_000_000, 'from 0 (no limit) to 1000000000', true),
  CODE_LLM_TIMEOUT_SECONDS: number(120, 1, 3600, 'of seconds from 1 to 3600'),

  MCP_AUTH_ENABLED: bool(false),
  MCP_AUTH_TOKEN: optionalString,
  MCP_AUTH_TOKENS: list,
  // MCP serves only tools that change nothing (core/mcp/server.ts); writing tools are neither listed nor run.
  MCP_READ_ONLY: bool(false),

  CRAWL_DELAY: number(1.0, 0, 3600, 'of seconds from 0 to 3600'),
  MAX_CONCURRENT_CRAWLS: number(20, 1, 20, 'from 1 to 20', true),
  CRAWL_ALLOW_HOSTS: allowHosts,
  // One extraction thread per core the worker's own thread (fetching, storing) leaves free, and no more than two:
  // on two cores a second thread crawled no faster and held one more V8 heap (figures in the CHANGELOG).
  EXTRACT_THREADS: number(Math.min(2, Math.max(1, availableParallelism() - 1)), 1, 64, 'from 1 to 64', true),
  EXTRACT_TIMEOUT_SECONDS: number(20, 0.01, 3600, 'of seconds from 0.01 to 3600'),
  // What searches and get_content do with snippets screened as possible prompt injection at index time.
  DOCDEX_SCREENING: optionalString.transform((v) => v ?? 'flag').pipe(z.enum(['off', 'flag', 'strict'], { message: 'expected off, flag or strict' })),
  // Two per core: a search alternates between PostgreSQL's CPU and the daemon's, so one per core leaves them idle.
  SEARCH_CONCURRENCY: number(2 * availableParallelism(), 1, 1000, 'from 1 to 1000', true),
  // Package registries `docdex add npm:|pypi:|crates:|go:` asks; unset NPM_REGISTRY_URL means npm's own configuration.
  NPM_REGISTRY_URL: url(['http', 'https']),
  PYPI_URL: url(['http', 'https']).transform((v) => v ?? 'https://pypi.org'),
  CRATES_URL: url(['http', 'https']).transform((v) => v ?? 'https://crates.io'),
  // The GOPROXY protocol's base URL that `docdex add go:` asks (one proxy, not GOPROXY's list).
  GO_PROXY_URL: url(['http', 'https']).transform((v) => v ?? 'https://proxy.golang.org'),

  WORKSPACE_PATH: optionalString,
  AGENT_HOST: optionalString.transform((v) => v ?? '127.0.0.1'),
  AGENT_PORT: port(4096),
  OPENCODE_SERVER_PASSWORD: optionalString,
  VAPID_PUBLIC_KEY: optionalString,
  VAPID_PRIVATE_KEY: optionalString,
  VAPID_SUBJECT: optionalString,
  SANDBOX_IMAGE: optionalString,
  SANDBOX_ACCEL: optionalString.transform((v) => v ?? 'auto').pipe(z.enum(['auto', 'kvm', 'tcg'], { message: 'expected auto, kvm or tcg' })),
  SANDBOX_EXEC_USER: optionalString,
  SANDBOX_START_TIMEOUT_MS: number(120_000, 1000, 3_600_000, 'of milliseconds from 1000 to 3600000', true),
  // The guest kernel alone takes about 66 MB once loaded: at 64 MiB QEMU hangs silently until the start timeout,
  // and at 96 MiB the guest's init is killed while booting. 128 MiB boots the busybox and Debian images (issue #51).
  SANDBOX_MEMORY_MB: number(1024, 128, 65536, 'of MiB from 128 to 65536', true),
  SANDBOX_CPUS: number(1, 1, 64, 'from 1 to 64', true),
});

/** Variables whose values are never printed, in errors or anywhere else. */
export const SECRET_VARIABLES = new Set(['DB_PASSWORD', 'DATABASE_URL', 'CODE_LLM_API_KEY', 'MCP_AUTH_TOKEN', 'MCP_AUTH_TOKENS', 'OPENCODE_SERVER_PASSWORD', 'VAPID_PRIVATE_KEY']);

export type Env = z.output<typeof envSchema>;

export interface Config {
  /** Where docdex keeps its own state: the embedded cluster, its password, caches. */
  home: string;
  database: { mode: 'external'; connectionString?: string; host?: string; port: number; database: string; user?: string; password?: string } | { mode: 'embedded' };
  /** searchConcurrency: searches the daemon runs at once; the rest wait their turn (core/search/shared.ts). */
  api: { host: string; port: number; corsOrigins: string[]; allowedHosts: string[]; auth: boolean; searchConcurrency: number };
  mcpAuth: { enabled: boolean; tokens: AuthToken[] };
  mcp: { readOnly: boolean };
  crawl: { delaySeconds: number; maxConcurrent: number };
  /** Headless Chromium for pages that render in the browser: DOCDEX_CHROMIUM, else found on PATH. */
  render: { chromium: string | undefined };
  /** Index packs: the folder `serve` and `worker` install from at start, and the unpacked size cap. */
  packs: { dir: string | undefined; maxBytes: number };
  /** The outbound policy's allow-list (src/core/net/outbound.ts). */
  outbound: { allowHosts: AllowEntry[] };
  /** Package registry base URLs (core/registry/); npmUrl unset means `npm config get registry`. */
  registry: { npmUrl?: string; pypiUrl: string; cratesUrl: string; goProxyUrl: string };
  /** Extraction of crawled pages and uploaded files in worker threads, with a time budget per document. */
  extract: { threads: number; timeoutMs: number };
  /** DOCDEX_SCREENING: flagged snippets returned with their flag (`flag`), withheld (`strict`) or unmarked (`off`). */
  screening: 'off' | 'flag' | 'strict';
  llm: {
    enabled: boolean;
    apiKey?: string;
    model?: string;
    baseUrl?: string;
    localModel?: string;
    /** Simultaneous requests to the model per process. */
    maxConcurrency: number;
    /** Per crawl or upload job; 0 means no limit. */
    jobMaxCalls: number;
    jobMaxTokens: number;
    timeoutMs: number;
  };
  agent: {
    workspacePath: string;
    /** WORKSPACE_PATH was set: a request for the agent manager in `docdex serve`. */
    workspacePathSet?: boolean;
    host: string;
    port: number;
    serverPassword?: string;
    vapid?: { publicKey: string; privateKey: string; subject: string };
  };
  sandbox: {
    image?: string;
    accel: 'auto' | 'kvm' | 'tcg';
    execUser?: string;
    startTimeoutMs: number;
    memoryMb: number;
    cpus: number;
  };
  env: Env;
}

export class ConfigError extends UserError {
  constructor(message: string, hint?: string) {
    super(message, { code: 'invalid_config', ...(hint === undefined ? {} : { hint }) });
  }
}

function describeValue(name: string, raw: string | undefined): string {
  if (raw === undefined) return '';
  if (SECRET_VARIABLES.has(name)) return ' (value hidden)';
  const shown = raw.length > 60 ? `${raw.slice(0, 57)}...` : raw;
  return `=${JSON.stringify(shown)}`;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** A loopback name or literal. Only a four-part 127/8 literal counts: `127.example.com` is a name like any other. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.has(host) || (ipaddr.IPv4.isValidFourPartDecimal(host) && ipaddr.IPv4.parse(host).range() === 'loopback');
}

/**
 * Auth for REST follows MCP auth by default whenever the daemon is reachable from other hosts. A non-loopback
 * bind without it is refused by assertAuthConfigured, so this default never leaves a network bind open.
 */
function restAuthFor(env: Env, bindHost: string): boolean {
  return env.API_AUTH ?? (env.MCP_AUTH_ENABLED && !isLoopbackHost(bindHost));
}

function assertTokenLength(env: Env): void {
  const short = [
    ...(env.MCP_AUTH_TOKEN !== undefined && parseAuthTokenEntry(env.MCP_AUTH_TOKEN).token.length < MIN_TOKEN_LENGTH ? ['MCP_AUTH_TOKEN'] : []),
    ...(env.MCP_AUTH_TOKENS.some((t) => parseAuthTokenEntry(t).token.length < MIN_TOKEN_LENGTH) ? ['MCP_AUTH_TOKENS'] : []),
  ];
  if (short.length > 0) {
    throw new ConfigError(`${short.join(' and ')} (value hidden): every token must be at least ${MIN_TOKEN_LENGTH} characters long.`, 'Generate one with: openssl rand -base64 32');
  }
}

/** MCP_AUTH_TOKEN and MCP_AUTH_TOKENS as distinct tokens with their scopes (`auth-token.ts` has the rule). */
function scopedTokens(env: Env): AuthToken[] {
  try {
    return parseAuthTokens([...(env.MCP_AUTH_TOKEN ? [env.MCP_AUTH_TOKEN] : []), ...env.MCP_AUTH_TOKENS]);
  } catch (error) {
    if (!(error instanceof TokenScopeConflict)) throw error;
    throw new ConfigError(`MCP_AUTH_TOKEN/MCP_AUTH_TOKENS (values hidden): ${error.message}.`, 'List each token once, with :read for read-only access or without a suffix for full access.');
  }
}

/** The configuration as seen by a daemon bound to `bindHost` (`docdex serve --host` overrides API_HOST). */
export function configForBind(config: Config, bindHost: string): Config {
  return { ...config, api: { ...config.api, host: bindHost, auth: restAuthFor(config.env, bindHost) } };
}

/** Parses the environment. Throws ConfigError (exit code 2) naming the first bad variable. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const result = envSchema.safeParse(source);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const name = String(issue.path[0] ?? 'environment');
    throw new ConfigError(`Invalid environment variable ${name}${describeValue(name, source[name])}: ${issue.message}.`, `Fix or unset ${name}; see "Configuration" in the README.`);
  }
  const env = result.data;

  assertTokenLength(env);
  const tokens = scopedTokens(env);
  const home = path.resolve(env.DOCDEX_HOME ?? path.join(env.XDG_DATA_HOME ?? path.join(source.HOME ?? homedir(), '.local', 'share'), 'docdex'));

  let database: Config['database'] = { mode: 'embedded' };
  if (env.DATABASE_URL !== undefined) {
    database = { mode: 'external', connectionString: env.DATABASE_URL, port: 5432, database: 'docdex' };
  } else if (env.DB_HOST !== undefined) {
    database = {
      mode: 'external',
      host: env.DB_HOST,
      port: env.DB_PORT ?? 5432,
      database: env.DB_NAME ?? 'docdex',
      ...(env.DB_USER === undefined ? {} : { user: env.DB_USER }),
      ...(env.DB_PASSWORD === undefined ? {} : { password: env.DB_PASSWORD }),
    };
  }

  const vapid =
    env.VAPID_PUBLIC_KEY && env.VAPID_PRIVATE_KEY ? { publicKey: env.VAPID_PUBLIC_KEY, privateKey: env.VAPID_PRIVATE_KEY, subject: env.VAPID_SUBJECT ?? 'mailto:docdex@localhost' } : undefined;

  return {
    home,
    database,
    api: {
      host: env.API_HOST,
      port: env.API_PORT ?? 7654,
      corsOrigins: env.API_CORS_ORIGINS,
      allowedHosts: env.API_ALLOWED_HOSTS,
      auth: restAuthFor(env, env.API_HOST),
      searchConcurrency: env.SEARCH_CONCURRENCY,
    },
    mcpAuth: { enabled: env.MCP_AUTH_ENABLED, tokens },
    mcp: { readOnly: env.MCP_READ_ONLY },
    crawl: { delaySeconds: env.CRAWL_DELAY, maxConcurrent: env.MAX_CONCURRENT_CRAWLS },
    render: { chromium: env.DOCDEX_CHROMIUM },
    packs: { dir: env.DOCDEX_PACKS_DIR === undefined ? undefined : path.resolve(env.DOCDEX_PACKS_DIR), maxBytes: env.DOCDEX_PACK_MAX_MB * 1024 * 1024 },
    outbound: { allowHosts: env.CRAWL_ALLOW_HOSTS },
    registry: { ...(env.NPM_REGISTRY_URL === undefined ? {} : { npmUrl: env.NPM_REGISTRY_URL }), pypiUrl: env.PYPI_URL, cratesUrl: env.CRATES_URL, goProxyUrl: env.GO_PROXY_URL },
    extract: { threads: env.EXTRACT_THREADS, timeoutMs: Math.round(env.EXTRACT_TIMEOUT_SECONDS * 1000) },
    screening: env.DOCDEX_SCREENING,
    llm: {
      enabled: env.CODE_ENABLE_LLM_EXTRACTION,
      ...(env.CODE_LLM_API_KEY === undefined ? {} : { apiKey: env.CODE_LLM_API_KEY }),
      ...(env.CODE_LLM_EXTRACTION_MODEL === undefined ? {} : { model: env.CODE_LLM_EXTRACTION_MODEL }),
      ...(env.CODE_LLM_BASE_URL === undefined ? {} : { baseUrl: env.CODE_LLM_BASE_URL }),
      ...(env.CODE_LLM_EXTRACTION_MODE === undefined ? {} : { localModel: env.CODE_LLM_EXTRACTION_MODE }),
      maxConcurrency: env.CODE_LLM_MAX_CONCURRENCY,
      jobMaxCalls: env.CODE_LLM_JOB_MAX_CALLS,
      jobMaxTokens: env.CODE_LLM_JOB_MAX_TOKENS,
      timeoutMs: Math.round(env.CODE_LLM_TIMEOUT_SECONDS * 1000),
    },
    agent: {
      workspacePath: path.resolve(env.WORKSPACE_PATH ?? 'workspace'),
      ...(env.WORKSPACE_PATH === undefined ? {} : { workspacePathSet: true }),
      host: env.AGENT_HOST,
      port: env.AGENT_PORT ?? 4096,
      ...(env.OPENCODE_SERVER_PASSWORD === undefined ? {} : { serverPassword: env.OPENCODE_SERVER_PASSWORD }),
      ...(vapid === undefined ? {} : { vapid }),
    },
    sandbox: {
      ...(env.SANDBOX_IMAGE === undefined ? {} : { image: env.SANDBOX_IMAGE }),
      accel: env.SANDBOX_ACCEL,
      ...(env.SANDBOX_EXEC_USER === undefined ? {} : { execUser: env.SANDBOX_EXEC_USER }),
      startTimeoutMs: env.SANDBOX_START_TIMEOUT_MS,
      memoryMb: env.SANDBOX_MEMORY_MB,
      cpus: env.SANDBOX_CPUS,
    },
    env,
  };
}

/**
 * Fails closed: enabling MCP auth without any token is a startup error, not an open server; so is listening on
 * a non-loopback address without REST auth (the REST API starts crawls and writes settings; MCP routes are
 * guarded whenever REST auth is on).
 */
export function assertAuthConfigured(config: Config): void {
  if ((config.mcpAuth.enabled || config.api.auth) && config.mcpAuth.tokens.length === 0) {
    throw new ConfigError('MCP_AUTH_ENABLED is true but no token is configured.', 'Set MCP_AUTH_TOKEN or MCP_AUTH_TOKENS (comma-separated), or set MCP_AUTH_ENABLED=false.');
  }
  if (!isLoopbackHost(config.api.host) && !config.api.auth) {
    throw new ConfigError(
      `Refusing to listen on ${config.api.host} without authentication: anyone who can reach it could use the API.`,
      `Set MCP_AUTH_ENABLED=true and MCP_AUTH_TOKENS (API_AUTH then defaults to true; API_AUTH=false is not allowed off loopback), or bind to 127.0.0.1 (API_HOST or --host).`,
    );
  }
}
