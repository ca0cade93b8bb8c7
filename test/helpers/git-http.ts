import { execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * `git http-backend` behind a tiny node:http CGI wrapper on 127.0.0.1: real smart HTTP for tests, with optional
 * basic auth. While an authorised request is served it takes a process listing, so a test can check that no
 * process's arguments carry the token.
 */
export interface GitHttpServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  /** Process listings (`ps -eo args`) taken while authorised requests were being served. */
  listings: string[];
  /** Authorization headers seen, for checking what the client sent. */
  requests: Array<{ method: string; path: string; authorized: boolean }>;
  close(): Promise<void>;
}

function authorised(header: string | undefined, auth: { username: string; password: string } | undefined): boolean {
  if (!auth) return true;
  const expected = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  return header === expected;
}

function cgiEnv(request: http.IncomingMessage, projectRoot: string): NodeJS.ProcessEnv {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  return {
    PATH: process.env.PATH,
    GIT_PROJECT_ROOT: projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.replace(/^\?/, ''),
    REQUEST_METHOD: request.method ?? 'GET',
    CONTENT_TYPE: request.headers['content-type'] ?? '',
    REMOTE_USER: 'test',
    REMOTE_ADDR: '127.0.0.1',
    ...(request.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(request.headers['content-encoding']) } : {}),
    ...(request.headers['git-protocol'] ? { GIT_PROTOCOL: String(request.headers['git-protocol']) } : {}),
  };
}

/** Writes the CGI response: its header block (with an optional Status line), then the body as it streams. */
function pipeCgi(child: ReturnType<typeof spawn>, response: http.ServerResponse): void {
  let head = Buffer.alloc(0);
  let headersDone = false;
  child.stdout!.on('data', (chunk: Buffer) => {
    if (headersDone) {
      response.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n') >= 0 ? head.indexOf('\r\n\r\n') + 4 : head.indexOf('\n\n') >= 0 ? head.indexOf('\n\n') + 2 : -1;
    if (end < 0) return;
    headersDone = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else response.setHeader(name, value);
    }
    response.writeHead(status);
    response.write(head.subarray(end));
  });
  child.stdout!.on('end', () => response.end());
}

export async function startGitHttpServer(projectRoot: string, options: { auth?: { username: string; password: string } } = {}): Promise<GitHttpServer> {
  const listings: string[] = [];
  const requests: GitHttpServer['requests'] = [];
  const server = http.createServer((request, response) => {
    const ok = authorised(request.headers.authorization, options.auth);
    requests.push({ method: request.method ?? '', path: request.url ?? '', authorized: ok && options.auth !== undefined });
    if (!ok) {
      response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="docdex-test"' }).end('unauthorized');
      return;
    }
    if (options.auth) listings.push(execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }));
    const child = spawn('git', ['http-backend'], { env: cgiEnv(request, projectRoot), stdio: ['pipe', 'pipe', 'ignore'] });
    request.pipe(child.stdin);
    pipeCgi(child, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    listings,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
