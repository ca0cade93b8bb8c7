import { readFileSync } from 'node:fs';
import { INTERNAL_TOKEN_VAR } from './credentials.js';
import { SandboxUnavailableError } from './unavailable.js';

/**
 * Arguments of `sandbox exec` as raw bytes. Node decodes argv as UTF-8 and replaces invalid sequences, which
 * would silently change a command containing such bytes; Linux keeps the original argv in
 * /proc/self/cmdline, so the exec path reads it from there and the command reaches the guest byte for byte.
 */
export function rawProcessArgs(processArgv: readonly string[], cmdline?: Buffer): Buffer[] {
  const fallback = processArgv.slice(2).map((a) => Buffer.from(a, 'utf8'));
  let raw: Buffer;
  try {
    raw = cmdline ?? readFileSync('/proc/self/cmdline');
  } catch {
    return fallback;
  }
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0) {
      parts.push(Buffer.from(raw.subarray(start, i)));
      start = i + 1;
    }
  }
  if (start < raw.length) parts.push(Buffer.from(raw.subarray(start)));
  // /proc holds node's own options before the script; the user arguments are the tail.
  const wanted = processArgv.length - 2;
  if (wanted < 0 || parts.length < wanted) return fallback;
  const tail = parts.slice(parts.length - wanted);
  // If anything rewrote the process title, the tail is not our argv: trust it only if it decodes to argv.
  for (let i = 0; i < wanted; i++) if (tail[i]!.toString('utf8') !== processArgv[i + 2]) return fallback;
  return tail;
}

export interface ExecArgs {
  workdir: Buffer;
  env: Buffer[];
  argv: Buffer[];
  timeoutMs: number;
}

const ENV_ENTRY = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Parses the arguments after `sandbox exec`: `-w DIR`, repeated `-e K=V`, `--timeout MS`, then `-- ARGV...`. */
export function parseExecArgs(args: readonly Buffer[]): ExecArgs {
  let workdir: Buffer | undefined;
  const env: Buffer[] = [];
  let timeoutMs = 0;
  let i = 0;
  const value = (flag: string): Buffer => {
    const v = args[i + 1];
    if (v === undefined) throw new SandboxUnavailableError(`sandbox exec: ${flag} needs a value`);
    i += 2;
    return v;
  };
  while (i < args.length) {
    const a = args[i]!.toString('latin1');
    if (a === '--') {
      i++;
      break;
    }
    if (a === '-w' || a === '--workdir') workdir = value(a);
    else if (a === '-e' || a === '--env') {
      const entry = value(a);
      if (!ENV_ENTRY.test(entry.toString('latin1'))) throw new SandboxUnavailableError(`sandbox exec: -e expects NAME=VALUE, got ${JSON.stringify(entry.toString('utf8'))}`);
      if (entry.toString('latin1').startsWith(`${INTERNAL_TOKEN_VAR}=`)) throw new SandboxUnavailableError(`sandbox exec: ${INTERNAL_TOKEN_VAR} never crosses into the sandbox`);
      env.push(entry);
    } else if (a === '--timeout') {
      const t = Number(value(a).toString('latin1'));
      if (!Number.isInteger(t) || t < 0 || t > 0xffffffff) throw new SandboxUnavailableError('sandbox exec: --timeout expects milliseconds');
      timeoutMs = t;
    } else if (a.startsWith('-')) throw new SandboxUnavailableError(`sandbox exec: unknown option ${a}`);
    else break;
  }
  const argv = args.slice(i);
  if (!workdir) throw new SandboxUnavailableError('sandbox exec: -w DIR is required');
  if (argv.length === 0) throw new SandboxUnavailableError('sandbox exec: no command given (use -- sh -c CMD)');
  return { workdir, env, argv: [...argv], timeoutMs };
}
