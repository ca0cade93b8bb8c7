import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';

/** A real git repository made for a test: files, commits and tags, served through file:// or git http-backend. */
export interface TestRepo {
  /** The bare repository (what remotes point at). */
  bare: string;
  url: string;
  write(files: Record<string, string | Buffer>): void;
  remove(paths: string[]): void;
  /** Commits everything in the work tree and pushes it; returns the commit hash. */
  commit(message: string, options?: { tag?: string }): Promise<string>;
  cleanup(): void;
}

const IDENTITY = ['-c', 'user.name=docdex test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false', '-c', 'tag.gpgsign=false'];
const ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' };

async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await execa('git', [...IDENTITY, ...args], { cwd, env: ENV });
  return stdout.trim();
}

/** A repository named `name` (its bare copy is `<tmp>/<name>.git`) on branch main. */
export async function createTestRepo(name = 'acme'): Promise<TestRepo> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'docdex-test-repo-'));
  const work = path.join(root, 'work');
  const bare = path.join(root, `${name}.git`);
  mkdirSync(work);
  await git(root, ['init', '-q', '--bare', '-b', 'main', bare]);
  await git(work, ['init', '-q', '-b', 'main']);
  await git(work, ['remote', 'add', 'origin', bare]);
  return {
    bare,
    url: `file://${bare}`,
    write(files) {
      for (const [rel, content] of Object.entries(files)) {
        const file = path.join(work, rel);
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, content);
      }
    },
    remove(paths) {
      for (const rel of paths) rmSync(path.join(work, rel), { force: true });
    },
    async commit(message, options = {}) {
      await git(work, ['add', '-A']);
      await git(work, ['commit', '-q', '--allow-empty', '-m', message]);
      if (options.tag) await git(work, ['tag', '-a', options.tag, '-m', options.tag]);
      await git(work, ['push', '-q', '--follow-tags', 'origin', 'main']);
      return git(work, ['rev-parse', 'HEAD']);
    },
    cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}
