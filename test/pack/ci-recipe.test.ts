import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { generatedSite, serveSite } from '../helpers/site.js';
import type { TestSite } from '../helpers/site.js';

/**
 * The README's "Index in CI" recipe, end to end with the real binary: `docdex add <docs site> --wait` and
 * `docdex export` in one DOCDEX_HOME (the CI job), the pack served over HTTP (the artifact), then
 * `docdex import <url>` into a fresh one (a developer's machine) and the same searches there.
 */

const QUERIES = ['open widget', 'close widget force', 'install testlib', 'widgte'];

function json(result: { stdout: unknown; stderr: unknown; exitCode?: number | null }): any {
  expect(result.exitCode, String(result.stderr)).toBe(0);
  return JSON.parse(String(result.stdout));
}

async function serveFile(file: string): Promise<{ url: string; close(): Promise<void> }> {
  const body = readFileSync(file);
  const server = http.createServer((req, res) => {
    if (req.url === '/releases/docs.docdex') res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/releases/docs.docdex`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('Index in CI recipe', () => {
  let ci: TestDatabase;
  let dev: TestDatabase;
  let site: TestSite;

  beforeAll(async () => {
    ci = await createTestDatabase();
    dev = await createTestDatabase();
    site = await serveSite(generatedSite(4));
  }, 60_000);
  afterAll(async () => {
    await site?.close();
    await ci?.drop();
    await dev?.drop();
  });

  it('adds a docs site, exports it, and a fresh home imports it from a URL with the same search results', async () => {
    json(await runCli(['add', `${site.base}/`, '--name', 'acme-docs', '--depth', '2', '--wait', '--json'], { env: ci.env, timeout: 180_000 }));
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'docdex-ci-')), 'docs.docdex');
    const exported = json(await runCli(['export', 'acme-docs', '-o', file, '--json'], { env: ci.env }));
    expect(exported.libraries[0]).toMatchObject({ name: 'acme-docs' });
    expect(exported.libraries[0].snippets).toBeGreaterThan(0);
    const served = await serveFile(file);
    try {
      const imported = json(await runCli(['import', served.url, '--json'], { env: dev.env }));
      expect(imported.packs[0].libraries[0]).toMatchObject({ name: 'acme-docs', status: 'installed', snippets: exported.libraries[0].snippets });
      const again = json(await runCli(['import', served.url, '--json'], { env: dev.env }));
      expect(again.packs[0].libraries[0].status).toBe('unchanged');
    } finally {
      await served.close();
    }
    let found = 0;
    for (const q of QUERIES) {
      const strip = (r: any) => r.items.map(({ id: _i, source_id: _s, ...rest }: any) => rest);
      const there = json(await runCli(['search', q, '--json'], { env: ci.env }));
      const here = json(await runCli(['search', q, '--json'], { env: dev.env }));
      expect(strip(here), q).toEqual(strip(there));
      found += here.items.length;
    }
    expect(found).toBeGreaterThan(0);
    const missing = await runCli(['import', `${site.base}/nope.docdex`], { env: dev.env });
    expect(missing.exitCode).not.toBe(0);
    expect(String(missing.stderr)).toMatch(/Error: .*HTTP 404/);
  }, 300_000);
});
