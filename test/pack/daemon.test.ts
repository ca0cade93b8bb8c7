import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { packsAtStart } from '../../src/daemon/packs-at-start.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { addPage, createSource } from '../search/fixtures.js';
import { exportToBuffer, repack } from './pack-helpers.js';

const TOKEN = 'pack-token'.padEnd(32, '-');

async function sourceRows(db: TestDatabase): Promise<Array<{ name: string; version: string; snippet_count: number }>> {
  return (await db.pool.query('SELECT name, version, snippet_count FROM sources ORDER BY name, version')).rows;
}

describe('packs over REST and DOCDEX_PACKS_DIR', () => {
  let from: TestDatabase;
  let to: TestDatabase;
  let pack: Buffer;

  beforeAll(async () => {
    from = await createTestDatabase();
    to = await createTestDatabase();
    const source = await createSource(from.pool, 'okapi', '3.1');
    await addPage(from.pool, source, 'https://okapi.example/start', [{ title: 'Stripe a leg', code: 'okapi.stripe(leg)', language: 'python' }]);
    pack = await exportToBuffer(from.pool, ['okapi@3.1']);
  }, 120_000);
  afterAll(async () => {
    await from?.drop();
    await to?.drop();
  });

  it('installs the packs of DOCDEX_PACKS_DIR at start, and again at the next start changes nothing', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-packs-dir-'));
    writeFileSync(path.join(dir, 'okapi.docdex'), pack);
    writeFileSync(path.join(dir, 'broken.docdex'), pack.subarray(0, 100));
    const config = loadConfig({ ...to.env, DOCDEX_PACKS_DIR: dir });
    for (let start = 0; start < 2; start++) {
      const daemon = await startTestDaemon(config, { routes: docsIndexRoutes, services: [packsAtStart] });
      await daemon.close();
      expect(await sourceRows(to)).toEqual([{ name: 'okapi', version: '3.1', snippet_count: 1 }]);
    }
  }, 120_000);

  it('serves a source as a pack and installs a posted pack, behind the token', async () => {
    const daemon = await startTestDaemon(loadConfig({ ...from.env, MCP_AUTH_ENABLED: 'true', MCP_AUTH_TOKEN: TOKEN, API_AUTH: 'true' }), { routes: docsIndexRoutes });
    const auth = { authorization: `Bearer ${TOKEN}` };
    try {
      expect((await fetch(`${daemon.base}/api/sources/okapi/pack`)).status).toBe(401);
      const download = await fetch(`${daemon.base}/api/sources/okapi/pack`, { headers: auth });
      expect(download.status).toBe(200);
      expect(download.headers.get('content-disposition')).toContain('okapi-3.1.docdex');
      const served = Buffer.from(await download.arrayBuffer());
      const post = (body: Buffer, fields: Record<string, string> = {}, headers: Record<string, string> = auth) => {
        const form = new FormData();
        for (const [k, v] of Object.entries(fields)) form.append(k, v);
        form.append('file', new Blob([new Uint8Array(body)]), 'p.docdex');
        return fetch(`${daemon.base}/api/packs`, { method: 'POST', body: form, headers });
      };
      expect((await post(served, {}, {})).status).toBe(401);
      const renamed = await post(served, { as: 'okapi-copy@1' });
      expect(renamed.status).toBe(200);
      expect(((await renamed.json()) as { libraries: unknown[] }).libraries[0]).toMatchObject({ name: 'okapi-copy', version: '1', status: 'installed', snippets: 1 });
      const tampered = await repack(served, (files) => {
        const part = files.find((f) => f.name.endsWith('snippets.ndjson'))!;
        part.data = Buffer.from(part.data.toString().replace('okapi', 'okapa'));
      });
      const refused = await post(tampered, { as: 'okapi-bad@1' });
      expect(refused.status).toBe(422);
      expect(await refused.json()).toMatchObject({ code: 'pack_invalid' });
      expect((await sourceRows(from)).map((s) => s.name)).toEqual(['okapi', 'okapi-copy']);
    } finally {
      await daemon.close();
    }
  }, 120_000);
});
