import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { generatedSite, serveSite } from '../helpers/site.js';
import type { TestSite } from '../helpers/site.js';

/**
 * docdex as someone outside a checkout gets it: `npm pack` once, the tarball served over HTTP as a release
 * asset is, and the README's CI recipe run as written (its `npm install -g "$DOCDEX_TARBALL"` into a fresh
 * global prefix, then its docdex steps), then the README's quick start with that installed `docdex`, against
 * the embedded database of a fresh home. npm 11 holds dependencies' install scripts back; the README must name
 * each one npm warns about and say what they do.
 */

function readme(): string {
  return readFileSync(path.join(ROOT, 'README.md'), 'utf8');
}

function section(title: string): string {
  const text = readme();
  const start = text.indexOf(`## ${title}`);
  expect(start, title).toBeGreaterThanOrEqual(0);
  return text.slice(start, text.indexOf('\n## ', start + 3));
}

/** The recipe's `run:` steps and its `env:` values, from the section's YAML block. */
function ciRecipe(): { env: Record<string, string>; steps: string[] } {
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section('Index in CI, install anywhere'))![1]!;
  const env: Record<string, string> = {};
  for (const m of yaml.matchAll(/^ {6}([A-Z_]+): (\S+)$/gm)) env[m[1]!] = m[2]!;
  const steps = [...yaml.matchAll(/^ {6}- run: (.+)$/gm)].map((m) => m[1]!.trim());
  return { env, steps };
}

async function serveTarball(file: string): Promise<{ url: string; close(): Promise<void> }> {
  const body = readFileSync(file);
  const name = `/releases/${path.basename(file)}`;
  const server = http.createServer((req, res) => {
    if (req.url === name) res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': body.length }).end(body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}${name}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('the packed tarball, installed globally', () => {
  let dir: string;
  let site: TestSite;
  let tarball: { url: string; close(): Promise<void> };
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-install-'));
    const packed = await execa('npm', ['pack', '--pack-destination', dir], { cwd: ROOT, reject: false });
    expect(packed.exitCode, packed.stderr).toBe(0);
    const file = readdirSync(dir).find((f) => /^docdex-\d+\.\d+\.\d+.*\.tgz$/.test(f));
    expect(file).toBeDefined();
    tarball = await serveTarball(path.join(dir, file!));
    site = await serveSite(generatedSite(3));
    // A fresh machine: a global prefix of its own, a new home, and nothing of the checkout on the PATH; only the
    // host's network settings (its CA bundle, proxies) come along, as a CI runner has its own.
    const network = Object.entries(process.env).filter(([key]) => /^(NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR)|(https?|no)_proxy)$/i.test(key));
    env = {
      ...Object.fromEntries(network),
      HOME: process.env.HOME,
      PATH: `${path.join(dir, 'prefix', 'bin')}:${path.dirname(process.execPath)}:/usr/bin:/bin`,
      TMPDIR: os.tmpdir(),
      npm_config_prefix: path.join(dir, 'prefix'),
      npm_config_update_notifier: 'false',
      // Packages the runner's npm cache holds (the checkout's own install filled it) are taken from it without
      // asking the registry whether they changed: the same locked versions, without hundreds of round trips.
      npm_config_prefer_offline: 'true',
      DOCDEX_HOME: path.join(dir, 'home'),
      CRAWL_DELAY: '0',
      NO_COLOR: '1',
    };
  }, 60_000);

  afterAll(async () => {
    const installed = dir && path.join(dir, 'prefix', 'bin', 'docdex');
    if (env && installed && existsSync(installed)) await execa(installed, ['db', 'stop'], { env, extendEnv: false, reject: false, timeout: 60_000 });
    await tarball?.close();
    await site?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 240_000);

  it("runs the README's CI recipe as written, then its quick start, from the installed docdex", async () => {
    const recipe = ciRecipe();
    expect(recipe.steps.join('\n')).not.toMatch(/\bnpx docdex\b/);
    expect(recipe.env.DOCDEX_TARBALL).toMatch(/\/docdex-\d+\.\d+\.\d+\.tgz$/);
    const [install, ...steps] = recipe.steps;
    expect(install).toBe('npm install -g "$DOCDEX_TARBALL"');

    const installed = await execa('sh', ['-c', install!], {
      env: { ...env, DOCDEX_TARBALL: tarball.url },
      extendEnv: false,
      reject: false,
      cwd: dir,
      timeout: 600_000,
    });
    expect(installed.exitCode, installed.stderr).toBe(0);
    const which = await execa('sh', ['-c', 'command -v docdex'], { env, extendEnv: false });
    expect(which.stdout).toBe(path.join(dir, 'prefix', 'bin', 'docdex'));

    // Every install script npm held back is named in the README, with what it is for.
    const held = [...installed.stderr.matchAll(/^npm warn install-scripts {3}(\S+?)@\d/gm)].map((m) => m[1]!);
    const scripts = section('Index in CI, install anywhere');
    for (const name of held) expect(scripts, name).toContain(`\`${name}\``);

    // The recipe's docdex steps, with its example docs site pointed at a loopback one.
    for (const step of steps.filter((s) => s.startsWith('docdex '))) {
      const command = step.replace('https://docs.example.com', `${site.base}/`);
      const result = await execa('sh', ['-c', command], { env, extendEnv: false, reject: false, cwd: dir, timeout: 300_000 });
      expect(result.exitCode, `${command}\n${result.stderr}`).toBe(0);
      expect(() => JSON.parse(result.stdout), command).not.toThrow();
    }
    expect(existsSync(path.join(dir, 'docs.docdex'))).toBe(true);

    // The quick start's index-and-search line, through the real npm registry, with the installed docdex.
    const quickStart = [...section('Quick start').matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim())[1]!;
    expect(quickStart).toMatch(/^docdex add npm:/);
    const result = await execa('sh', ['-c', quickStart], { env, extendEnv: false, reject: false, cwd: dir, timeout: 300_000 });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Indexed: /);
    expect(result.stdout).toMatch(/^1\. /m);
  }, 900_000);
});
