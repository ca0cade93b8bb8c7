import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../errors.js';
import { SANDBOX_SOURCE_DIR } from './build.js';
import { FORWARDED_ENV_NAMES } from './credentials.js';
import { unavailableMessage } from './unavailable.js';

/** File name of the generated shim, written next to the generated plugins. */
export const SHIM_NAME = 'mgr-sandbox-shell';
export const SHIM_TEMPLATE = path.join(SANDBOX_SOURCE_DIR, 'shim.sh.tmpl');

/** POSIX single-quoting: safe for any bytes except NUL. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
const NONCE = /^[A-Za-z0-9]{16,128}$/;

/** What the shim prints (exit 125) for a host spawn that carries neither fail-closed marker of this start. */
export const UNPLANNED_MESSAGE = unavailableMessage(
  'the mgr-sandbox plugin did not plan this command (it is not loaded in the agent server, or opencode did not call its shell.env hook), so it is refused instead of running on the host',
);

export interface ShimOptions {
  /** The runner command, e.g. [process.execPath, '/opt/docdex/bin/run.js']; the shim appends `sandbox exec ...`. */
  runner: readonly string[];
  /** The host shell for the spawns the plugin vouched for as host: the user's configured shell, else /bin/sh. */
  hostShell: string;
  /** Names the shim may forward with -e; defaults to the credential allow-list. */
  envNames?: readonly string[];
  /**
   * The start's nonce, also rendered into mgr-sandbox.js (MGR_SANDBOX_PLANNED / MGR_SANDBOX_HOOKED must carry
   * it for a host spawn). Default: a random one, which no plugin knows, so every host spawn is refused.
   */
  nonce?: string;
}

export function renderShim(template: string, options: ShimOptions): string {
  if (options.runner.length === 0) throw new Error('the runner command is empty');
  if (!path.isAbsolute(options.hostShell)) throw new Error(`the host shell must be an absolute path, got ${options.hostShell}`);
  const names = options.envNames ?? FORWARDED_ENV_NAMES;
  // The names are spliced into eval'd code in the shim; anything but a plain variable name would be code.
  for (const n of names) if (!ENV_NAME.test(n)) throw new Error(`refusing to forward the variable name ${JSON.stringify(n)}`);
  if (names.includes('MGR_INTERNAL_TOKEN')) throw new Error('MGR_INTERNAL_TOKEN can never be forwarded');
  const nonce = options.nonce ?? randomBytes(16).toString('hex');
  if (!NONCE.test(nonce)) throw new Error('the shim nonce must be 16-128 letters or digits');
  // A template without the nonce check would pass unplanned spawns to the host: refuse to render it.
  for (const marker of ['@RUNNER@', '@HOST_SHELL@', '@ENV_NAMES@', '@NONCE@', '@UNPLANNED_MESSAGE@']) {
    if (!template.includes(marker)) throw new Error(`shim template lacks ${marker}`);
  }
  return template
    .replaceAll('@RUNNER@', options.runner.map(shellQuote).join(' '))
    .replaceAll('@HOST_SHELL@', shellQuote(options.hostShell))
    .replaceAll('@ENV_NAMES@', names.length > 0 ? names.join(' ') : '')
    .replaceAll('@NONCE@', shellQuote(nonce))
    .replaceAll('@UNPLANNED_MESSAGE@', shellQuote(UNPLANNED_MESSAGE));
}

/**
 * Renders the shim and writes it atomically into `dir` (next to the plugins). Enforcement depends on it, so a
 * failure is an error the agent server start must not ignore (spec: start is refused if the shim cannot be
 * written).
 */
export async function writeShim(dir: string, options: ShimOptions & { template?: string }): Promise<string> {
  const file = path.join(dir, SHIM_NAME);
  const tmp = path.join(dir, `.${SHIM_NAME}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const template = options.template ?? (await readFile(SHIM_TEMPLATE, 'utf8'));
    const text = renderShim(template, options);
    await mkdir(dir, { recursive: true });
    await writeFile(tmp, text, { mode: 0o755 });
    await chmod(tmp, 0o755);
    await rename(tmp, file);
    return file;
  } catch (error) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw new UserError(`Cannot write the sandbox shell shim to ${file}: ${(error as Error).message}`, {
      code: 'sandbox_shim_unwritable',
      hint: 'The agent server is not started with sandbox enforcement while the shim cannot be written; check the permissions of the plugin directory.',
      cause: error,
    });
  }
}
