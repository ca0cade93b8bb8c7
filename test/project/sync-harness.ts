import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { runCli } from '../helpers/cli.js';
import { createTestRepo } from '../helpers/git-repo.js';
import type { TestRepo } from '../helpers/git-repo.js';

/** What `docdex sync --json` prints, as the end-to-end sync tests read it. */
export interface SyncJson {
  project_id: string | null;
  libraries: Array<{ ecosystem: string; name: string; version: string | null; state: string; reason: string | null; direct: boolean }>;
  skipped: Array<{ name: string; reason: string }>;
  jobs: Array<{ library: string; type: string; what: string }>;
  to_add: string[];
  not_indexed?: string[];
}

/**
 * A repository `name` with one tagged commit per tag (a README whose code block is `codeFor(tag)`), served by
 * the git http-backend from `gitRoot`; kept in `repos` for cleanup.
 */
export async function repoWithTags(gitRoot: string, repos: TestRepo[], name: string, tags: string[], code: { lang: string; line: (tag: string) => string }): Promise<void> {
  const repo = await createTestRepo(name);
  repos.push(repo);
  for (const tag of tags) {
    repo.write({ 'README.md': `# ${name}\n\nRelease ${tag}.\n\n\`\`\`${code.lang}\n${code.line(tag)}\n\`\`\`\n` });
    await repo.commit(tag, { tag });
  }
  symlinkSync(repo.bare, path.join(gitRoot, `${name}.git`));
}

/** The real binary's `docdex sync ARGS --json`. */
export async function runSync(args: string[], env: NodeJS.ProcessEnv): Promise<{ exitCode: number; json: SyncJson; stderr: string }> {
  const result = await runCli(['sync', ...args, '--json'], { env, timeout: 240_000 });
  return { exitCode: result.exitCode ?? -1, json: JSON.parse(String(result.stdout)) as SyncJson, stderr: String(result.stderr) };
}
