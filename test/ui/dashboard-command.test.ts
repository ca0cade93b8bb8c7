import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('docdex dashboard without a terminal', () => {
  it('refuses with exit code 2 and points to the --json commands', async () => {
    // runCli gives the binary no TTY: stdin is ignored and stdout is a pipe.
    const result = await runCli(['dashboard'], { env: { ...process.env, NO_COLOR: '1' } });
    expect(result.exitCode).toBe(2);
    expect(String(result.stderr).trim().split('\n')).toEqual([
      'Error: docdex dashboard needs an interactive terminal (stdin and stdout must be a TTY).',
      'Hint: For scripts, use `docdex crawl list --json` and `docdex sources list --json`.',
    ]);
    expect(String(result.stdout)).toBe('');
  });
});
