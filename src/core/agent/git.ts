import { access } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import type { Workspace } from './workspace.js';

/** Ten minutes for ordinary commands; clones get their own, longer bound. */
const GIT_TIMEOUT_MS = 10 * 60_000;

export class GitError extends Error {
  override readonly name = 'GitError';
  constructor(
    message: string,
    readonly stderr: string,
    readonly exitCode: number | undefined,
  ) {
    super(message);
  }
}

/** Removes credentials from URLs inside any text git printed, before it is stored or shown. */
export function redactCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1***@');
}

/**
 * The environment of manager-side git: never prompt (a prompt would hang a job forever), and use the
 * workspace's SSH configuration and known hosts when they exist.
 */
export async function gitEnv(ws: Workspace): Promise<Record<string, string>> {
  const sshConfig = path.join(ws.sshConfigDir, 'ssh_config');
  const knownHosts = path.join(ws.sshConfigDir, 'known_hosts');
  const ssh = ['ssh', '-o', 'BatchMode=yes'];
  if (await exists(sshConfig)) ssh.push('-F', sshConfig);
  if (await exists(knownHosts)) ssh.push('-o', `UserKnownHostsFile=${knownHosts}`);
  return { GIT_TERMINAL_PROMPT: '0', GCM_INTERACTIVE: 'never', GIT_SSH_COMMAND: ssh.join(' ') };
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

export async function git(ws: Workspace, args: string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<string> {
  const result = await execa('git', args, {
    cwd: options.cwd ?? ws.root,
    env: await gitEnv(ws),
    reject: false,
    timeout: options.timeoutMs ?? GIT_TIMEOUT_MS,
    stdin: 'ignore',
    stripFinalNewline: true,
  });
  if (result.exitCode !== 0 || result.timedOut) {
    const stderr = redactCredentials(String(result.stderr ?? '').trim());
    const why = result.timedOut ? `timed out after ${Math.round((options.timeoutMs ?? GIT_TIMEOUT_MS) / 1000)} s` : stderr.split('\n').slice(-3).join(' ') || `exit code ${result.exitCode}`;
    throw new GitError(`git ${args[0]} failed: ${why}`, stderr, result.exitCode);
  }
  return String(result.stdout ?? '');
}
