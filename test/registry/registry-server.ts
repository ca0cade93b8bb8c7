import { expect } from 'vitest';
import { UserError } from '../../src/core/errors.js';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'registry');

/** A recorded registry answer (test/fixtures/registry/<file>), with `{{BASE}}` replaced by the server's URL. */
export function fixture(file: string): string {
  return readFileSync(path.join(FIXTURES, file), 'utf8');
}

export interface Answer {
  status?: number;
  body: string | Buffer;
  type?: string;
  headers?: Record<string, string>;
}

export interface RegistryServer {
  base: string;
  /** Paths asked, with their User-Agent, in order. */
  hits: Array<{ path: string; userAgent: string | undefined }>;
  close(): Promise<void>;
}

/**
 * A registry on 127.0.0.1 answering `routes` (request path, query included, → answer); everything else is
 * 404 with `notFound`'s body, as the real registries answer an unknown package.
 */
export async function serveRegistry(routes: (base: string) => Record<string, Answer>, notFound: Answer = { status: 404, body: '{"error":"Not found"}' }): Promise<RegistryServer> {
  const hits: RegistryServer['hits'] = [];
  let table: Record<string, Answer> = {};
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    hits.push({ path: url, userAgent: req.headers['user-agent'] });
    const answer = table[url] ?? notFound;
    res.writeHead(answer.status ?? 200, { 'content-type': answer.type ?? 'application/json', ...answer.headers }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  table = routes(base);
  return {
    base,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The UserError a registry call rejects with (a resolved call fails the test). */
export async function failure(promise: Promise<unknown>): Promise<UserError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UserError);
  return error as UserError;
}
