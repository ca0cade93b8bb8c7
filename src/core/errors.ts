/**
 * The error kinds docdex distinguishes, after Shopify's cli-kit: a UserError is something the user can fix
 * (bad input, missing configuration) and carries a next step; anything else is a bug and keeps its stack.
 * The base command renders both; only bugs (or DEBUG=docdex*) show a stack trace.
 */
export class UserError extends Error {
  override readonly name = 'UserError';
  /** Process exit code for the CLI: 2 for invalid input or configuration, 1 for everything else. */
  readonly exitCode: number;
  /** A short machine code for HTTP and --json output, e.g. `not_found`, `invalid_config`. */
  readonly code: string;

  constructor(
    message: string,
    readonly options: { hint?: string; code?: string; exitCode?: number; cause?: unknown; details?: unknown[] } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.exitCode = options.exitCode ?? 1;
    this.code = options.code ?? 'user_error';
  }

  get hint(): string | undefined {
    return this.options.hint;
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
