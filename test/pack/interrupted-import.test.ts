import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { packsAtStart } from '../../src/daemon/packs-at-start.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { BIN, runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { addPage, createSource } from '../search/fixtures.js';
import { exportToBuffer } from './pack-helpers.js';

/**
 * SECURITY.md, Hostile input: "The folders of imports that were killed are removed before the next import and
 * when `docdex serve` or `docdex worker` starts; a folder whose import still runs, in any process, is left
 * alone." The real CLI is killed with SIGKILL while it unpacks a pack it downloads from a server that stops
 * sending halfway.
 */

// temp-dir.ts: a killed import's lock counts as abandoned once it has not been renewed for 10 s.
const STALE_MS = 10_000;

let from: TestDatabase;
let to: TestDatabase;
let pack: Buffer;
let packFile: string;
let server: http.Server;
let base: string;
/** Requests of /stall wait for this to send the rest of the pack. */
let releaseStalled: () => void = () => undefined;
let stalled = new Promise<void>((resolve) => (releaseStalled = resolve));

beforeAll(async () => {
  from = await createTestDatabase();
  to = await createTestDatabase();
  const source = await createSource(from.pool, 'okapi', '3.1');
  await addPage(from.pool, source, 'https://okapi.example/start', [{ title: 'Stripe a leg', code: 'okapi.stripe(leg)', language: 'python' }]);
  pack = await exportToBuffer(from.pool, ['okapi@3.1']);
  packFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'docdex-pack-file-')), 'okapi.docdex');
  writeFileSync(packFile, pack);
  server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': pack.length });
    res.write(pack.subarray(0, pack.length >> 1));
    void stalled.then(() => res.end(pack.subarray(pack.length >> 1)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  releaseStalled();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await from?.drop();
  await to?.drop();
});

function packFolders(home: string): string[] {
  const tmp = path.join(home, 'tmp');
  return existsSync(tmp) ? readdirSync(tmp).filter((n) => n.startsWith('pack-') && !n.endsWith('.lock')) : [];
}

function tmpEntries(home: string): string[] {
  const tmp = path.join(home, 'tmp');
  return existsSync(tmp) ? readdirSync(tmp) : [];
}

/** `docdex import <stalling url>` in `home`, running until its pack folder exists. */
async function stalledImport(home: string): Promise<{ cli: ResultPromise; folder: string }> {
  const before = new Set(packFolders(home));
  const cli = execa(process.execPath, [BIN, 'import', `${base}/stall.docdex`, '--json'], { env: { ...to.env, DOCDEX_HOME: home }, extendEnv: false, reject: false });
  for (let i = 0; i < 600; i++) {
    const folder = packFolders(home).find((f) => !before.has(f));
    if (folder !== undefined) return { cli, folder };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  cli.kill('SIGKILL');
  throw new Error(`no pack folder appeared in ${home}: ${String((await cli).stderr)}`);
}

function freshHome(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'docdex-interrupted-home-'));
}

describe('imports killed midway', () => {
  it('leaves no folder behind once a later import or a daemon start has run, and never takes a running import’s folder', async () => {
    const importHome = freshHome();
    const startHome = freshHome();
    const killed = await stalledImport(importHome);
    const killedAtStart = await stalledImport(startHome);
    const running = await stalledImport(importHome);
    killed.cli.kill('SIGKILL');
    killedAtStart.cli.kill('SIGKILL');
    expect((await killed.cli).signal).toBe('SIGKILL');
    expect((await killedAtStart.cli).signal).toBe('SIGKILL');
    // The kill leaves the unpacked part behind: what this test is about.
    expect(packFolders(importHome)).toContain(killed.folder);
    expect(packFolders(startHome)).toEqual([killedAtStart.folder]);

    await new Promise((resolve) => setTimeout(resolve, STALE_MS + 1500));

    // A later import removes the killed one's folder and leaves the running one's.
    const later = await runCli(['import', packFile, '--json'], { env: { ...to.env, DOCDEX_HOME: importHome } });
    expect(later.exitCode, String(later.stderr)).toBe(0);
    expect(packFolders(importHome)).toEqual([running.folder]);

    // A daemon start removes the killed one's folder.
    const daemon = await startTestDaemon(loadConfig({ ...to.env, DOCDEX_HOME: startHome }), { routes: docsIndexRoutes, services: [packsAtStart] });
    await daemon.close();
    expect(tmpEntries(startHome)).toEqual([]);

    // The running import was never disturbed: it finishes once the server sends the rest.
    releaseStalled();
    const finished = await running.cli;
    expect(finished.exitCode, String(finished.stderr)).toBe(0);
    expect(JSON.parse(String(finished.stdout)).packs[0].libraries[0]).toMatchObject({ name: 'okapi', status: 'unchanged' });
    expect(tmpEntries(importHome)).toEqual([]);
    stalled = Promise.resolve();
  }, 120_000);
});
