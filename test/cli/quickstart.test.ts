import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/** The README's quick start, as a new user copies it: its install step must leave `docdex` on the PATH. */
function quickStartBlocks(): string[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('\n## ', readme.indexOf('## Quick start') + 3));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
}

describe("the README's quick start", () => {
  let db: TestDatabase;
  let cwd: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    cwd = mkdtempSync(path.join(os.tmpdir(), 'docdex-quickstart-'));
  });
  afterAll(async () => {
    await db.drop();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('leaves a working docdex command on the PATH, usable from any directory', async () => {
    const [install, use] = quickStartBlocks();
    expect(install).toMatch(/^npm install && npm run build && export PATH=/);
    expect(use).toMatch(/^docdex add npm:/);
    // The install block's PATH step, run from the checkout as the user would, then `docdex` from elsewhere.
    const pathStep = install!.split('&&').at(-1)!.trim();
    const script = `cd ${JSON.stringify(ROOT)} && ${pathStep} && cd ${JSON.stringify(cwd)} && docdex --version && docdex sources list --json`;
    const result = await execa('sh', ['-c', script], {
      env: { ...db.env, PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` },
      extendEnv: false,
      reject: false,
    });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^docdex\/\d+\.\d+\.\d+/);
  });

  it('indexes and searches a package as written, through the real npm registry', async (context) => {
    const unreachable = await fetch('https://registry.npmjs.org/semver', { signal: AbortSignal.timeout(15_000) }).then(
      async (r) => (await r.body?.cancel(), r.ok ? null : `HTTP ${r.status}`),
      (error: Error) => error.message,
    );
    if (unreachable) {
      console.warn(`Skipping the quick start's add: registry.npmjs.org is unreachable (${unreachable})`);
      context.skip();
    }
    const use = quickStartBlocks()[1]!;
    const result = await execa('sh', ['-c', use], {
      env: { ...db.env, PATH: `${path.join(ROOT, 'bin')}:${path.dirname(process.execPath)}:/usr/bin:/bin` },
      extendEnv: false,
      reject: false,
      cwd,
      timeout: 180_000,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Indexed: /);
    expect(result.stdout).toMatch(/^1\. /m);
  }, 240_000);

  it('uses docdex, not ./bin/run.js, in every example', () => {
    for (const block of quickStartBlocks()) expect(block).not.toContain('./bin/run.js');
  });
});
