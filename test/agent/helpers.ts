import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { loadConfig } from '../../src/core/config.js';
import type { Config } from '../../src/core/config.js';
import { startAgentServices } from '../../src/core/agent/services.js';
import { readManagerToken } from '../../src/core/agent/token.js';
import { workspaceLayout } from '../../src/core/agent/workspace.js';
import type { Workspace } from '../../src/core/agent/workspace.js';
import { agentRoutes } from '../../src/daemon/routes/agent.js';
import type { ServiceStarter } from '../../src/daemon/server.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { rawHttp } from '../helpers/raw-http.js';

export interface AgentDaemon {
  base: string;
  config: Config;
  workspace: Workspace;
  token: string;
  /** A request with the manager token (or `token: null` for none, or another token). */
  call(method: string, route: string, options?: { body?: unknown; token?: string | null; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/** The real daemon (startDaemon) with the agent routes and, unless told otherwise, the agent services. */
export async function startAgentDaemon(db: TestDatabase, options: { env?: Record<string, string>; services?: boolean; workspacePath?: string } = {}): Promise<AgentDaemon> {
  const workspacePath = options.workspacePath ?? mkdtempSync(path.join(os.tmpdir(), 'docdex-ws-'));
  const config = loadConfig({ ...db.env, WORKSPACE_PATH: workspacePath, ...options.env });
  const services: ServiceStarter[] = options.services === false ? [] : [startAgentServices];
  const daemon = await startTestDaemon(config, { routes: agentRoutes, services });
  // The token is created by the services at start, or by the first internal request without them.
  let token = await readManagerToken(db.pool);
  if (token === undefined) {
    await fetch(`${daemon.base}/api/internal/settings`);
    token = (await readManagerToken(db.pool))!;
  }
  const self: AgentDaemon = {
    base: daemon.base,
    config,
    workspace: workspaceLayout(config),
    token,
    async call(method, route, { body, token: given, headers } = {}) {
      const auth = given === null ? {} : { authorization: `Bearer ${given ?? self.token}` };
      const res = await fetch(`${daemon.base}${route}`, {
        method,
        headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async close() {
      await daemon.close();
      if (options.workspacePath === undefined) rmSync(workspacePath, { recursive: true, force: true });
    },
  };
  return self;
}

/** Raw HTTP, so that paths like `/a/../b` reach the server unnormalised (fetch would resolve them). */
export function rawRequest(base: string, method: string, rawPath: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; body: string }> {
  return rawHttp(base, method, rawPath, { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body);
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A small HTTP server on 127.0.0.1 that records requests and answers with `respond`. */
export async function startFakeServer(respond: (req: RecordedRequest) => { status: number; body?: unknown } | Promise<{ status: number; body?: unknown }>) {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(recorded);
      void Promise.resolve(respond(recorded)).then(({ status, body }) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A bare repository with one commit on `main` (and a `dev` branch), made with the real git. */
export async function makeBareRepo(): Promise<{ dir: string; bare: string; cleanup(): void }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-git-'));
  const work = path.join(dir, 'work');
  const bare = path.join(dir, 'origin.git');
  const env = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };
  await execa('git', ['init', '--quiet', '--initial-branch=main', work]);
  await execa('sh', ['-c', 'echo hello > README.md && git add README.md && git commit --quiet -m "first commit" && git branch dev'], { cwd: work, env });
  await execa('git', ['clone', '--quiet', '--bare', work, bare]);
  return { dir, bare, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 200));
  }
}
