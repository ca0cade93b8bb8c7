/**
 * The one table of error codes: for each machine code a UserError (or an HTTP error body) can carry, its HTTP
 * status, the CLI's exit code and, where every occurrence gives the same next step, a default hint. REST,
 * the MCP REST endpoint, the access checks and the CLI all read it, so a code means one thing everywhere.
 * Exit codes: 2 for invalid input or configuration, 1 for everything else.
 */
export interface ErrorCodeSpec {
  status: number;
  exitCode: number;
  hint?: string;
}

export const ERROR_CODES = {
  // Input the caller can fix.
  user_error: { status: 400, exitCode: 1 },
  bad_request: { status: 400, exitCode: 1 },
  validation_error: { status: 422, exitCode: 2 },
  usage_error: { status: 400, exitCode: 2 },
  unknown_command: { status: 400, exitCode: 2 },
  invalid_config: { status: 400, exitCode: 2 },
  invalid_skill_name: { status: 400, exitCode: 2 },
  invalid_library_spec: { status: 422, exitCode: 2 },
  // A package whose registry names no repository, docs site or README that can be read.
  nothing_to_index: { status: 422, exitCode: 1 },
  // A project manifest or lockfile that cannot be read as its format (docdex sync).
  manifest_invalid: { status: 422, exitCode: 2, hint: 'Fix the file (your package manager can regenerate a lockfile), or leave it out with --exclude.' },
  // docdex sync found no manifest it reads in the directory.
  no_manifest: { status: 422, exitCode: 2, hint: 'Run docdex sync in a project directory (package.json, pyproject.toml, requirements.txt, go.mod or Cargo.toml).' },
  project_not_found: { status: 404, exitCode: 1, hint: 'Run `docdex sync` in the project directory first.' },
  // The project's .docdex.yml is not YAML, or not the settings docdex sync reads.
  project_config_invalid: { status: 422, exitCode: 2, hint: '.docdex.yml takes: name, all (true/false), include and exclude (name globs), sources (library name: docs URL or http(s) git spec).' },
  payload_too_large: { status: 413, exitCode: 1 },
  pack_invalid: { status: 422, exitCode: 2, hint: 'The file is not a complete, unaltered docdex pack: download or export it again.' },
  pack_version_unsupported: { status: 422, exitCode: 2, hint: 'Upgrade docdex to import this pack.' },
  pack_conflict: { status: 409, exitCode: 1, hint: 'Pass --replace to replace the installed version, or --as name@version to install it under another name.' },
  pack_too_large: { status: 413, exitCode: 1, hint: 'Raise DOCDEX_PACK_MAX_MB if you trust the pack.' },
  unsupported_media_type: { status: 415, exitCode: 1 },
  // Nothing by that name, or not in that state.
  not_found: { status: 404, exitCode: 1 },
  version_not_indexed: { status: 404, exitCode: 1 },
  unknown_tool: { status: 404, exitCode: 1 },
  package_not_found: { status: 404, exitCode: 1, hint: 'Check the package name and its ecosystem (npm:, pypi:, crates:, go:).' },
  version_not_found: { status: 404, exitCode: 1 },
  conflict: { status: 409, exitCode: 1 },
  // Who may ask.
  unauthorized: { status: 401, exitCode: 1 },
  forbidden: { status: 403, exitCode: 1 },
  host_not_allowed: { status: 403, exitCode: 1 },
  origin_not_allowed: { status: 403, exitCode: 1 },
  // A writing MCP tool or REST route asked of a read-only MCP server (MCP_READ_ONLY) or a token listed with :read.
  read_only: { status: 403, exitCode: 1, hint: 'Use a token without :read, or a server without MCP_READ_ONLY=true, for calls that change the index.' },
  rate_limited: { status: 429, exitCode: 1 },
  // A service docdex depends on is down or refused: retry later (503), or it answered badly (502).
  unavailable: { status: 503, exitCode: 1 },
  database_unavailable: { status: 503, exitCode: 1, hint: 'Retry in a moment; `docdex db status` shows whether PostgreSQL is running.' },
  // The LLM endpoint enhancement depends on cannot be reached or refuses: like the database, a dependency
  // that is down, so 503 (retry later), not a fault of the request that would make it 400.
  llm_unavailable: { status: 503, exitCode: 1 },
  bad_gateway: { status: 502, exitCode: 1 },
  // A package registry (npm, PyPI, crates.io or the mirror configured for it) cannot be reached: retry later.
  registry_unavailable: { status: 503, exitCode: 1 },
  database_extension_unavailable: { status: 400, exitCode: 1 },
  // The terminal, a prompt or the user stopped the command.
  aborted: { status: 400, exitCode: 1 },
  cancelled: { status: 400, exitCode: 130 },
  confirmation_required: { status: 400, exitCode: 2 },
  secret_required: { status: 400, exitCode: 2 },
  editor_unavailable: { status: 400, exitCode: 2 },
  tty_required: { status: 400, exitCode: 2 },
  // The daemon's own listener.
  port_in_use: { status: 400, exitCode: 1 },
  port_denied: { status: 400, exitCode: 1 },
  bad_host: { status: 400, exitCode: 1 },
  // The agent half: git, opencode and the sandbox.
  git_failed: { status: 400, exitCode: 1 },
  clone_failed: { status: 400, exitCode: 1 },
  // Git repositories as sources (core/git/).
  git_remote_refused: {
    status: 403,
    exitCode: 2,
    hint: 'Local paths, file:// and ssh remotes, and hosts on loopback, are only for a repository the local user types at the CLI; private addresses need CRAWL_ALLOW_HOSTS.',
  },
  git_repo_not_found: { status: 404, exitCode: 1, hint: 'Check the repository URL; a private repository needs a stored credential for its host.' },
  git_ref_not_found: { status: 404, exitCode: 1, hint: 'Give a tag, a branch or a full 40-character commit hash that the repository has.' },
  git_auth_required: { status: 422, exitCode: 1, hint: 'Store a token for the host: `docdex manager git-credentials add --host HOST`.' },
  git_repo_too_large: { status: 413, exitCode: 1, hint: 'Index only the docs (paths) or raise maxRepoMb.' },
  git_nothing_to_index: { status: 422, exitCode: 2, hint: 'Name the documentation folders with paths (docs/, a README, examples/).' },
  attach_failed: { status: 400, exitCode: 1 },
  agent_binary_missing: { status: 400, exitCode: 1 },
  agent_server_down: { status: 400, exitCode: 1 },
  agent_server_failed: { status: 400, exitCode: 1 },
  agent_server_timeout: { status: 400, exitCode: 1 },
  agent_server_unprotected: { status: 400, exitCode: 1 },
  agent_server_unsupervised: { status: 400, exitCode: 1 },
  // `sandbox exec` and the shim exit 125 when nothing ran, as docker does for its own failures.
  sandbox_unavailable: { status: 400, exitCode: 125 },
  sandbox_not_built: { status: 400, exitCode: 1 },
  sandbox_build_failed: { status: 400, exitCode: 1 },
  sandbox_config_content_invalid: { status: 400, exitCode: 1 },
  sandbox_plugin_not_loaded: { status: 400, exitCode: 1 },
  sandbox_plugin_unwritable: { status: 400, exitCode: 1 },
  sandbox_shim_unwritable: { status: 400, exitCode: 1 },
  // `docdex sandbox enable` (or PUT /api/settings/sandbox) on a host that cannot run the microVM: nothing changed.
  sandbox_host_unsupported: { status: 409, exitCode: 1 },
  // `--render always` with no Chromium on the machine (core/render/browser.ts): refused before the crawl starts.
  browser_unavailable: { status: 503, exitCode: 1, hint: 'Install Chromium (Debian/Ubuntu: apt-get install chromium) or set DOCDEX_CHROMIUM to its path.' },
  // An MCP tool failed without a code of its own, and bugs: never a UserError, listed so their status is here too.
  tool_error: { status: 400, exitCode: 1 },
  internal_error: { status: 500, exitCode: 1 },
} as const satisfies Record<string, ErrorCodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/** The HTTP status of a code; a code from outside the table (none should reach here) is the caller's fault, 400. */
export function httpStatusOf(code: string): number {
  return isErrorCode(code) ? ERROR_CODES[code].status : 400;
}

/** Every code in the table, in its order. */
export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

/** The codes that answer with `status`. */
export function codesWithStatus(status: number): ErrorCode[] {
  return ERROR_CODE_NAMES.filter((code) => ERROR_CODES[code].status === status);
}

/**
 * The error kinds docdex distinguishes, after Shopify's cli-kit: a UserError is something the user can fix
 * (bad input, missing configuration) and carries a next step; anything else is a bug and keeps its stack.
 * The base command renders both; only bugs (or DEBUG=docdex*) show a stack trace.
 */
export class UserError extends Error {
  override readonly name = 'UserError';
  /** Process exit code for the CLI: its code's, unless the error passes on someone else's (a child's, a parse's). */
  readonly exitCode: number;
  /** A short machine code for HTTP and --json output, e.g. `not_found`, `invalid_config`. */
  readonly code: ErrorCode;

  constructor(
    message: string,
    readonly options: { hint?: string; code?: ErrorCode; exitCode?: number; cause?: unknown; details?: unknown[] } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code ?? 'user_error';
    this.exitCode = options.exitCode ?? ERROR_CODES[this.code].exitCode;
  }

  get hint(): string | undefined {
    return this.options.hint ?? (ERROR_CODES[this.code] as ErrorCodeSpec).hint;
  }

  /** The HTTP status of this error's code. */
  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get details(): unknown[] | undefined {
    return this.options.details;
  }
}

/** Invalid input (flags, arguments, request fields): exit code 2, HTTP 422. */
export class ValidationError extends UserError {
  constructor(message: string, options: { hint?: string; details?: unknown[] } = {}) {
    super(message, { ...options, code: 'validation_error', exitCode: 2 });
  }
}

/** A named thing does not exist: HTTP 404. */
export class NotFoundError extends UserError {
  constructor(message: string, options: { hint?: string } = {}) {
    super(message, { ...options, code: 'not_found' });
  }
}

/** The request conflicts with the current state (already exists, wrong job state): HTTP 409. */
export class ConflictError extends UserError {
  constructor(message: string, options: { hint?: string } = {}) {
    super(message, { ...options, code: 'conflict' });
  }
}

export function isUserError(error: unknown): error is UserError {
  return error instanceof UserError;
}
