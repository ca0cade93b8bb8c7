import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import type { Result } from 'execa';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = path.join(ROOT, 'bin', 'run.js');

/**
 * Runs the real built binary (bin/run.js over dist/), the way a user does. `npm run build` must have run:
 * `npm run check` and .ci/run build before testing.
 */
export async function runCli(args: string[], options: { env?: NodeJS.ProcessEnv; input?: string; timeout?: number; cwd?: string } = {}): Promise<Result> {
  return execa(process.execPath, [BIN, ...args], {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: options.env ?? process.env,
    extendEnv: false,
    reject: false,
    timeout: options.timeout ?? 60_000,
    ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
  });
}
