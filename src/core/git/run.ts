import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { redactCredentials } from '../agent/git.js';

/**
 * The one way core/git runs git: a clean environment (no system or global configuration, so the user's
 * config cannot add credential helpers, hooks, proxies or url rewrites), never a prompt, no hooks, no ext
 * transport, file transport only for the CLI's own local sources, and a size watch that stops a fetch over
 * the cap. Whatever git prints is redacted before it is kept.
 */

export interface GitContext {
  /** The private temp directory: HOME for git, and where the repository is checked out (`repo/`). */
  tmp: string;
  /** file:// and local paths allowed (the CLI's local sources only). */
  allowFile: boolean;
  /** Extra `-c` settings (pinned address, no redirects). */
  settings: string[];
  /** Extra environment: GIT_ASKPASS and the variables its script reads. */
  env: Record<string, string>;
  /** Stops any git process once the temp directory grows past this many bytes. */
  maxBytes: number;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** Killed because the temp directory grew past maxBytes. */
  oversize: boolean;
  timedOut: boolean;
}

const GIT_TIMEOUT_MS = 10 * 60_000;
const SIZE_POLL_MS = 200;

function baseSettings(context: GitContext): string[] {
  const settings = [
    'core.hooksPath=/dev/null',
    `protocol.file.allow=${context.allowFile ? 'always' : 'never'}`,
    'protocol.ext.allow=never',
    'credential.helper=',
    'core.askPass=',
    'submodule.recurse=false',
    'advice.detachedHead=false',
    'init.defaultBranch=main',
    ...context.settings,
  ];
  return settings.flatMap((setting) => ['-c', setting]);
}

function gitEnvironment(context: GitContext): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: context.tmp,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GCM_INTERACTIVE: 'never',
    GIT_SSH_COMMAND: 'ssh -o BatchMode=yes',
    LC_ALL: 'C',
    ...context.env,
  };
}

/** Bytes under `dir`, files only; what cannot be read (a file git just renamed) counts as nothing. */
export async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await directoryBytes(full);
    else if (entry.isFile())
      total += await fs.stat(full).then(
        (s) => s.size,
        () => 0,
      );
  }
  return total;
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Runs git with the context's settings; never rejects for git's own failure (see exitCode). `input`: its stdin. */
export async function runGit(context: GitContext, args: string[], cwd: string, input?: string): Promise<GitResult> {
  const child = execa('git', [...baseSettings(context), ...args], {
    cwd,
    env: gitEnvironment(context),
    extendEnv: false,
    reject: false,
    timeout: GIT_TIMEOUT_MS,
    ...(input === undefined ? { stdin: 'ignore' as const } : { input }),
    stripFinalNewline: true,
    // Its own process group: a fetch runs helpers (remote-https, index-pack) that must stop with it.
    detached: true,
  });
  let oversize = false;
  let checking = false;
  const watch = setInterval(() => {
    if (checking) return;
    checking = true;
    void directoryBytes(context.tmp).then((bytes) => {
      checking = false;
      if (bytes > context.maxBytes && !oversize) {
        oversize = true;
        killGroup(child.pid);
      }
    });
  }, SIZE_POLL_MS);
  try {
    const result = await child;
    return {
      stdout: String(result.stdout ?? ''),
      stderr: redactCredentials(String(result.stderr ?? '')),
      exitCode: result.exitCode ?? -1,
      oversize,
      timedOut: result.timedOut === true,
    };
  } finally {
    clearInterval(watch);
  }
}

/** Runs `fn` with a private temp directory (mode 0700), always removed afterwards. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'docdex-git-'));
  try {
    return await fn(dir);
  } finally {
    await fs.rm(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}
