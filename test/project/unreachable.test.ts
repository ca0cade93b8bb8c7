import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * Issue #49, item 7: a registry or git host that cannot be reached. Each dependency gets one line in the same
 * words on every path ("the host cannot be resolved", never `getaddrinfo ENOTFOUND`), the reasons are not
 * repeated, and one hint at the end names the setting that chooses the registry. `.invalid` never resolves
 * (RFC 6761), so these hosts fail the way an unreachable pypi.org does on a machine without DNS for it.
 */

let db: TestDatabase;
let projects: string;

beforeAll(async () => {
  db = await createTestDatabase({ PYPI_URL: 'https://pypi.invalid', NPM_REGISTRY_URL: 'https://registry.invalid/' });
  projects = mkdtempSync(path.join(os.tmpdir(), 'docdex-unreachable-'));
}, 60_000);

afterAll(async () => {
  rmSync(projects, { recursive: true, force: true });
  await db?.drop();
});

function project(name: string, files: Record<string, string>): string {
  const root = path.join(projects, name);
  mkdirSync(root, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(root, file), text);
  return root;
}

describe('unreachable registries', () => {
  it('sync of a Python project with PyPI unreachable: one line per dependency, one PYPI_URL hint, no raw errors', async () => {
    const root = project('pyshop', { 'requirements.txt': 'requests>=2.31\nflask~=3.0\nclick\n' });
    const result = await runCli(['sync', root], { env: db.env, timeout: 120_000 });
    const stdout = String(result.stdout);
    const stderr = String(result.stderr);
    expect(result.exitCode).toBe(1);
    for (const name of ['requests', 'flask', 'click']) {
      const lines = stdout.split('\n').filter((line) => line.startsWith(`  ${name} `) || line.startsWith(`  ${name}:`));
      expect(lines, stdout).toHaveLength(1);
      expect(lines[0]).toMatch(/: unresolved: The package registry at https:\/\/pypi\.invalid\/\S+ is unavailable: the host cannot be resolved$/);
    }
    const all = `${stdout}\n${stderr}`;
    expect(all).not.toMatch(/getaddrinfo|ENOTFOUND|EAI_AGAIN/);
    // The reasons are said once: the closing line only names the libraries.
    expect(all.match(/the host cannot be resolved/g)).toHaveLength(3);
    expect(stderr).toMatch(/^Not indexed: click, flask, requests\.$/m);
    const hints = stderr.split('\n').filter((line) => line.startsWith('Hint: '));
    expect(hints).toEqual(['Hint: PYPI_URL chooses this registry: point it at a mirror this machine can reach, or retry when the network is back.']);
  }, 180_000);

  it('--json carries each reason and its hint', async () => {
    const root = project('pyshop-json', { 'requirements.txt': 'requests>=2.31\n' });
    const result = await runCli(['sync', root, '--json', '--dry-run'], { env: db.env, timeout: 120_000 });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const json = JSON.parse(String(result.stdout)) as { libraries: Array<{ name: string; state: string; reason: string; hint: string }> };
    expect(json.libraries[0]).toMatchObject({ name: 'requests', state: 'unresolved', hint: expect.stringMatching(/^PYPI_URL chooses this registry/) });
    expect(json.libraries[0]!.reason).toMatch(/the host cannot be resolved$/);
  }, 180_000);

  it('add npm: with the npm registry unreachable says so in the same words, with its setting', async () => {
    const result = await runCli(['add', 'npm:left-pad@1.3.0'], { env: db.env, timeout: 120_000 });
    expect(result.exitCode).toBe(1);
    const stderr = String(result.stderr);
    expect(stderr).toMatch(/^Error: The package registry at https:\/\/registry\.invalid\/left-pad is unavailable: the host cannot be resolved\.$/m);
    expect(stderr).toMatch(/^Hint: NPM_REGISTRY_URL chooses this registry/m);
  }, 120_000);

  it('a git host that cannot be resolved gets a DNS hint, not a credential one', async () => {
    const result = await runCli(['add', 'https://git.invalid/acme/widgets.git@v1.0.0'], { env: db.env, timeout: 120_000 });
    expect(result.exitCode).toBe(1);
    const stderr = String(result.stderr);
    expect(stderr).toMatch(/^Error: git\.invalid: the host cannot be resolved\.$/m);
    expect(stderr).toMatch(/^Hint: Check the host name in the repository URL, and that this machine's DNS resolves git\.invalid/m);
    expect(stderr).not.toMatch(/credential/);
  }, 120_000);
});
