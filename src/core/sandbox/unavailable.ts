import { ERROR_CODES, UserError } from '../errors.js';

/**
 * The one message every fail-closed path starts with (spec: Errors). The agent sees it as the tool call's
 * output, so it must read as a sentence on its own and never be reworded.
 */
export const UNAVAILABLE_PREFIX = 'Sandbox enforcement is on but the sandbox is unavailable';

/** Exit code of `sandbox exec` (and the shim) when nothing ran: 125, as docker uses for its own failures. */
export const UNAVAILABLE_EXIT_CODE = ERROR_CODES.sandbox_unavailable.exitCode;

export function unavailableMessage(reason: string): string {
  return `${UNAVAILABLE_PREFIX}: ${reason}`;
}

/** The reason alone, without the prefix: for status lines, which must not claim enforcement is on when it is off. */
export function unavailableReason(message: string): string {
  return message.startsWith(`${UNAVAILABLE_PREFIX}: `) ? message.slice(UNAVAILABLE_PREFIX.length + 2) : message;
}

/**
 * The refusal for a working directory outside the mounted roots; it names both roots. A directory that only
 * looks inside them (a local repo linked into repos/) is named with where it resolves to, since that is what
 * the check compares and the bare path would read as inside.
 */
export function outsideRootsMessage(cwd: string, roots: readonly string[], realCwd = cwd): string {
  const named = roots.length === 2 ? `${roots[0]} and ${roots[1]}` : roots.join(', ');
  const where = realCwd === cwd ? cwd : `${cwd}, which resolves to ${realCwd},`;
  return unavailableMessage(`the working directory ${where} is outside the project roots ${named}`);
}

/** Capability detection, planning, boot, attestation or working-directory pinning failed: nothing ran. */
export class SandboxUnavailableError extends UserError {
  constructor(reason: string, options: { hint?: string; cause?: unknown } = {}) {
    super(unavailableMessage(reason), { ...options, code: 'sandbox_unavailable' });
  }
}
