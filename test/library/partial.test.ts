import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { closedPort } from '../helpers/closed-port.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { npmRegistryReachable } from '../helpers/npm.js';
import { serveRegistry } from '../registry/registry-server.js';
import { tarball } from '../registry/tarball-builder.js';
import type { RegistryServer } from '../registry/registry-server.js';

/**
 * Issue #49, items 3 and 8, through the real binary: a library counts as indexed when one of its origins
 * stored documents (its README, though its docs site is down); the other origins are warnings with their
 * reasons, in text and --json. Exit 0 when every library holds docs, 1 when one is left without, 2 for bad
 * input. A version already indexed is not fetched again unless --refresh. A library whose docs hold no code
 * says it has nothing to search.
 */

let db: TestDatabase;
let registry: RegistryServer;
let projects: string;
let down: string;
let gone: string;
let goneSite: http.Server;

const README_WITH_CODE = '# zodlike\n\nParse a value:\n\n```js\nimport { zparse } from "zodlike";\nzparse.object({ name: zparse.string() });\n```\n';
const README_WITHOUT_CODE = '# Installation\n> `npm install --save @types/typeslike`\n\n# Summary\nThis package contains type definitions for typeslike.\n';

function packument(name: string, version: string, base: string, extra: Record<string, unknown>): string {
  return JSON.stringify({ name, 'dist-tags': { latest: version }, versions: { [version]: { name, version, dist: { tarball: `${base}/${name}/-/${name}-${version}.tgz` }, ...extra } } });
}

interface AddJson {
  libraries: Array<{ status: string; name: string; version: string; jobs: unknown[]; snippet_count?: number }>;
  finished?: Array<{ type: string; status: string; error: string | null; what: string }>;
  results?: Array<{ library: string; state: string; document_count: number; snippet_count: number; warnings: Array<{ what: string; reason: string }> }>;
}

async function add(args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string; json: AddJson | null }> {
  const result = await runCli(['add', ...args], { env: db.env, timeout: 180_000 });
  const stdout = String(result.stdout);
  return { exitCode: result.exitCode ?? -1, stdout, stderr: String(result.stderr), json: args.includes('--json') ? (JSON.parse(stdout) as AddJson) : null };
}

function tarballHits(name: string): number {
  return registry.hits.filter((h) => h.path.startsWith(`/${name}/-/`)).length;
}

beforeAll(async () => {
  // Two ways a docs site fails: `down` refuses connections, which the crawler retries with backoff (seconds per
  // URL), so only the library left without docs meets it; `gone` answers 404 at once, for the other cases.
  down = `http://127.0.0.1:${await closedPort()}/docs/`;
  goneSite = http.createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('not found'));
  await new Promise<void>((resolve) => goneSite.listen(0, '127.0.0.1', resolve));
  gone = `http://127.0.0.1:${(goneSite.address() as AddressInfo).port}/docs/`;
  const tgz = async (readme: string) => ({ body: await tarball([{ name: 'package/README.md', content: readme }]), type: 'application/octet-stream' });
  const files = { zodlike: await tgz(README_WITH_CODE), zodtwo: await tgz(README_WITH_CODE), typeslike: await tgz(README_WITHOUT_CODE) };
  registry = await serveRegistry((base) => ({
    // No repository; a docs homepage that fails (zod.dev unreachable); the README in the tarball.
    '/zodlike': { body: packument('zodlike', '3.23.8', base, { homepage: gone }) },
    '/zodlike/-/zodlike-3.23.8.tgz': files.zodlike,
    '/zodtwo': { body: packument('zodtwo', '1.0.0', base, { homepage: gone }) },
    '/zodtwo/-/zodtwo-1.0.0.tgz': files.zodtwo,
    // A README without a code block (@types/node's shape).
    '/typeslike': { body: packument('typeslike', '2.0.0', base, {}) },
    '/typeslike/-/typeslike-2.0.0.tgz': files.typeslike,
  }));
  db = await createTestDatabase({ NPM_REGISTRY_URL: registry.base });
  projects = mkdtempSync(path.join(os.tmpdir(), 'docdex-partial-'));
}, 60_000);

afterAll(async () => {
  await registry?.close();
  await new Promise((resolve) => goneSite?.close(resolve));
  rmSync(projects, { recursive: true, force: true });
  await db?.drop();
});

describe('partial success', () => {
  it('add --wait: the README is indexed while the docs site is down: exit 0, the site a warning with its reason', async () => {
    const result = await add(['npm:zodlike@3.23.8', '--wait']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^zodlike@3\.23\.8: indexed, 1 document, \d+ snippets?\.$/m);
    expect(result.stderr).toMatch(new RegExp(`^Warning: zodlike@3\\.23\\.8: docs site ${gone.replace(/[.:/]/g, '\\$&')} was not indexed \\(crawl job [0-9a-f-]+\\): No page was crawled: .+\\.$`, 'm'));
    expect(result.stderr).not.toMatch(/^Error:/m);
  }, 240_000);

  it('add again: an indexed version is not fetched again; --refresh fetches it, and --json carries every reason', async () => {
    const before = tarballHits('zodlike');
    const asked = registry.hits.length;
    const again = await add(['npm:zodlike@3.23.8', '--wait', '--json']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.json!.libraries[0]).toMatchObject({ status: 'indexed', name: 'zodlike', version: '3.23.8', jobs: [] });
    expect(again.json!.results![0]).toMatchObject({ library: 'zodlike@3.23.8', state: 'indexed', document_count: 1, warnings: [] });
    expect(tarballHits('zodlike')).toBe(before);
    // An exact version that is indexed asks nothing of the registry either.
    expect(registry.hits.length).toBe(asked);
    const text = await add(['npm:zodlike@3.23.8']);
    expect(text.stdout).toContain('zodlike@3.23.8: already indexed (1 document, ');
    expect(text.stdout).toContain('nothing fetched. --refresh fetches it again.');

    const refreshed = await add(['npm:zodlike@3.23.8', '--wait', '--json', '--refresh']);
    expect(refreshed.exitCode, refreshed.stderr).toBe(0);
    expect(refreshed.json!.libraries[0]!.status).toBe('queued');
    expect(tarballHits('zodlike')).toBe(before + 1);
    const crawl = refreshed.json!.finished!.find((f) => f.type === 'crawl')!;
    expect(crawl).toMatchObject({ status: 'failed', what: `docs site ${gone}` });
    expect(crawl.error).toMatch(/^No page was crawled: /);
    expect(refreshed.json!.results![0]).toMatchObject({ state: 'indexed' });
    expect(refreshed.json!.results![0]!.warnings).toEqual([{ job_id: expect.any(String), type: 'crawl', what: `docs site ${gone}`, reason: crawl.error }]);
  }, 240_000);

  it('a library left without docs exits 1 with the reason; bad input exits 2', async () => {
    const failed = await add([down, '--name', 'downsite', '--wait', '--json']);
    expect(failed.exitCode).toBe(1);
    expect(failed.json!.results![0]).toMatchObject({ library: 'downsite', state: 'not_indexed', document_count: 0 });
    expect(failed.json!.results![0]!.warnings[0]!.reason).toMatch(/^No page was crawled: /);
    const text = await add([down, '--name', 'downsite', '--wait']);
    expect(text.exitCode).toBe(1);
    expect(text.stdout).toContain('downsite: not indexed: none of its sources stored a document.');

    const bad = await add(['npm:', '--wait']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/^Error: /m);
  }, 240_000);

  it('a library whose docs have no code says it has nothing to search (exit 0)', async () => {
    const result = await add(['npm:typeslike@2.0.0', '--wait']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('typeslike@2.0.0: nothing to search: 1 document, no code snippets');
    const json = await add(['npm:typeslike@2.0.0', '--wait', '--json']);
    expect(json.json!.results![0]).toMatchObject({ state: 'nothing_to_search', document_count: 1, snippet_count: 0 });
  }, 240_000);

  it('sync: one docs host down leaves the library indexed from its README: exit 0, a warning with the reason', async () => {
    const root = path.join(projects, 'shop');
    mkdirSync(root, { recursive: true });
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'shop', dependencies: { zodtwo: '^1.0.0', typeslike: '^2.0.0' } }));
    const packages = {
      'node_modules/zodtwo': { version: '1.0.0', resolved: `${registry.base}/zodtwo/-/zodtwo-1.0.0.tgz` },
      'node_modules/typeslike': { version: '2.0.0', resolved: `${registry.base}/typeslike/-/typeslike-2.0.0.tgz` },
    };
    writeFileSync(
      path.join(root, 'package-lock.json'),
      JSON.stringify({ name: 'shop', lockfileVersion: 3, packages: { '': { name: 'shop', dependencies: { zodtwo: '^1.0.0', typeslike: '^2.0.0' } }, ...packages } }),
    );
    const text = await runCli(['sync', root], { env: db.env, timeout: 240_000 });
    expect(text.exitCode, String(text.stderr)).toBe(0);
    expect(String(text.stdout)).toMatch(/^ {2}typeslike@2\.0\.0: indexed, nothing to search \(1 document, no code snippets\)$/m);
    expect(String(text.stdout)).toMatch(/^zodtwo@1\.0\.0: indexed, 1 document, \d+ snippets?\.$/m);
    expect(String(text.stderr)).toMatch(/^Warning: zodtwo@1\.0\.0: docs site .* was not indexed \(crawl job [0-9a-f-]+\): No page was crawled: /m);
    expect(String(text.stderr)).not.toContain('Not indexed');

    const again = await runCli(['sync', root, '--json'], { env: db.env, timeout: 240_000 });
    expect(again.exitCode, String(again.stderr)).toBe(0);
    const json = JSON.parse(String(again.stdout)) as { libraries: Array<{ name: string; state: string; snippet_count: number }>; jobs: unknown[]; not_indexed: string[] };
    expect(json.jobs).toEqual([]);
    expect(json.not_indexed).toEqual([]);
    expect(json.libraries.find((l) => l.name === 'typeslike')).toMatchObject({ state: 'indexed', snippet_count: 0 });
  }, 480_000);
});

const npmUnreachable = await npmRegistryReachable();
if (npmUnreachable) console.warn(`Skipping the @types/semver test: registry.npmjs.org is unreachable (${npmUnreachable})`);

describe.skipIf(npmUnreachable !== null)('a real package whose README has no code', () => {
  it('@types/semver: indexed, and said to have nothing to search', async () => {
    const env = { ...db.env };
    delete env.NPM_REGISTRY_URL;
    const result = await runCli(['add', 'npm:@types/semver@7.5.8', '--wait', '--json'], { env, timeout: 180_000 });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const json = JSON.parse(String(result.stdout)) as AddJson;
    expect(json.results![0]).toMatchObject({ library: '@types/semver@7.5.8', state: 'nothing_to_search', snippet_count: 0 });
    expect(json.results![0]!.document_count).toBeGreaterThan(0);
  }, 240_000);
});
