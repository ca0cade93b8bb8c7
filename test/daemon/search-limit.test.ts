import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { backendsWaitingOnLocks, untilWaitingOnLocks, withTableLocked } from '../helpers/locks.js';
import { addPage, createSource } from '../search/fixtures.js';

let db: TestDatabase;
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;

beforeAll(async () => {
  db = await createTestDatabase();
  const source = await createSource(db.pool, 'limited');
  await addPage(db.pool, source, 'https://limited.example/a.html', [
    { title: 'Opening sockets', code: 'sock = socket.create_connection(addr)' },
    { title: 'Closing sockets', code: 'sock.close()' },
  ]);
  daemon = await startTestDaemon(loadConfig({ ...db.env, SEARCH_CONCURRENCY: '1' }), { routes: [...docsIndexRoutes, ...mcpRoutes] });
});
afterAll(async () => {
  await daemon?.close();
  await db?.drop();
});

const APP = 'docdex-serve';

describe('SEARCH_CONCURRENCY', () => {
  it('caps the searches the daemon runs at once; a client that leaves while waiting costs nothing and breaks nothing', async () => {
    let first: Promise<Response> | undefined;
    let second: Promise<Response> | undefined;
    let acquired = 0;
    const count = () => acquired++;
    await withTableLocked(db.pool, 'snippets', async () => {
      first = fetch(`${daemon.base}/api/search?q=socket`);
      await untilWaitingOnLocks(db.pool, APP, 1);
      // A client that gives up while its search waits its turn.
      const leaving = http.get(`${daemon.base}/api/search?q=close`);
      leaving.on('error', () => undefined);
      second = fetch(`${daemon.base}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'opening' }) });
      await new Promise((r) => setTimeout(r, 300));
      leaving.destroy();
      await new Promise((r) => setTimeout(r, 100));
      expect(await backendsWaitingOnLocks(db.pool, APP)).toBe(1);
      daemon.db.pool.on('acquire', count);
    });
    const answers = await Promise.all([first!, second!]);
    await new Promise((r) => setTimeout(r, 300));
    daemon.db.pool.off('acquire', count);
    // Only the search of the client that stayed ran once the lock went; the one that left was dropped.
    expect(acquired).toBe(1);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(((await answers[1]!.json()) as { items: Array<{ title: string }> }).items[0]?.title).toBe('Opening sockets');
    // The daemon goes on answering, the abandoned search included.
    const again = await fetch(`${daemon.base}/api/search?q=close`);
    expect(again.status).toBe(200);
  });

  it('lets an MCP client cancel a get_content call whose search waits its turn', async () => {
    const client = new Client({ name: 'search-limit-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.base}/mcp`)));
    try {
      let first: Promise<Response> | undefined;
      let acquired = 0;
      const count = () => acquired++;
      await withTableLocked(db.pool, 'snippets', async () => {
        first = fetch(`${daemon.base}/api/search?q=socket`);
        await untilWaitingOnLocks(db.pool, APP, 1);
        const cancel = new AbortController();
        const call = client.callTool({ name: 'get_content', arguments: { library_id: 'limited', query: 'closing' } }, undefined, { signal: cancel.signal });
        await new Promise((r) => setTimeout(r, 300));
        cancel.abort();
        await expect(call).rejects.toThrow();
        expect(await backendsWaitingOnLocks(db.pool, APP)).toBe(1);
        // From here on, each search the daemon runs takes a connection from its pool (searchSnippets).
        daemon.db.pool.on('acquire', count);
      });
      expect((await first!).status).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
      daemon.db.pool.off('acquire', count);
      // The cancelled call's search was dropped from the queue, not run once the lock went.
      expect(acquired).toBe(0);
      const answer = await client.callTool({ name: 'get_content', arguments: { library_id: 'limited', query: 'closing' } });
      expect(answer.isError).toBeFalsy();
      expect(JSON.stringify(answer.content)).toContain('sock.close()');
    } finally {
      await client.close();
    }
  });
});
