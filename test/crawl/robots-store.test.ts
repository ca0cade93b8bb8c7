import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PageFetcher } from '../../src/core/crawl/fetch.js';
import { RobotsStore, RobotsUnavailableError } from '../../src/core/crawl/robots-store.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * robots.txt of a host that drops every connection: the fetcher retries it (with backoff), the page fails, and
 * the routes tried right after it (llms.txt, a sitemap, markdown twins of a start page) fail with that answer
 * instead of each retrying the dead host as long again. Once as long has passed, the next page asks again.
 */

let db: TestDatabase;
let server: net.Server;
let origin: string;
let connections = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  // Accepts and drops each connection at once: ECONNRESET, which the fetcher retries.
  server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await db.drop();
});

describe('robots.txt of a host that drops every connection', () => {
  it('fails the pages that ask right after the first failure without asking the host again, then asks again', async () => {
    const fetcher = new PageFetcher({ retryBaseMs: 100, maxRetries: 3 });
    const store = new RobotsStore(db.pool, fetcher, 0);
    const job = '00000000-0000-4000-8000-000000000001';
    try {
      const started = Date.now();
      await expect(store.get(job, origin, undefined, true)).rejects.toBeInstanceOf(RobotsUnavailableError);
      const spent = Date.now() - started;
      expect(connections).toBe(4);
      // Four more routes of the same start page, one after another: no connection more.
      for (let i = 0; i < 4; i++) await expect(store.get(job, origin, undefined, true)).rejects.toThrow(/robots\.txt unreachable/);
      expect(connections).toBe(4);
      // Another job asks for itself.
      await expect(store.get('00000000-0000-4000-8000-000000000002', origin, undefined, true)).rejects.toBeInstanceOf(RobotsUnavailableError);
      expect(connections).toBe(8);
      // Once as long as the failure took has passed, the next page of the first job asks again.
      await new Promise((resolve) => setTimeout(resolve, spent + 50));
      await expect(store.get(job, origin, undefined, true)).rejects.toBeInstanceOf(RobotsUnavailableError);
      expect(connections).toBe(12);
    } finally {
      await fetcher.close();
    }
  });
});
