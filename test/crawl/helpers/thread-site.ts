import { Worker } from 'node:worker_threads';

/**
 * An HTTP server on its own thread, for tests that assert on arrival times. The crawler's workers run in the
 * test process; a server on the same event loop would record an arrival late whenever the crawler is busy
 * (extracting a page, starting pg-boss) and so report gaps shorter than the ones on the wire.
 */

export interface StaticRoute {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  delayMs?: number;
}

export interface Arrival {
  /** ms, on the server thread's monotonic clock. */
  t: number;
  path: string;
  host: string;
  userAgent: string;
}

const SERVER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { performance } = require('node:perf_hooks');
const routes = workerData.routes;
const log = [];
const server = http.createServer((req, res) => {
  const t = performance.now();
  const url = new URL(req.url || '/', 'http://x');
  log.push({ t, path: url.pathname + url.search, host: req.headers.host || '', userAgent: req.headers['user-agent'] || '' });
  const route = routes[url.pathname];
  const send = () => {
    if (!route) return res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    const body = route.body || '';
    res.writeHead(route.status || 200, Object.assign({ 'content-type': 'text/html; charset=utf-8', 'content-length': String(Buffer.byteLength(body)) }, route.headers || {})).end(body);
  };
  if (route && route.delayMs) setTimeout(send, route.delayMs); else send();
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ type: 'port', port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'log') parentPort.postMessage({ type: 'log', log });
  if (m === 'close') { server.closeAllConnections(); server.close(() => parentPort.postMessage({ type: 'closed' })); }
});
`;

export class ThreadSite {
  private constructor(
    private readonly worker: Worker,
    readonly port: number,
  ) {}

  static async start(routes: Record<string, StaticRoute>): Promise<ThreadSite> {
    const worker = new Worker(SERVER, { eval: true, workerData: { routes } });
    const port = await new Promise<number>((resolve, reject) => {
      worker.once('error', reject);
      worker.once('message', (m: { type: string; port: number }) => resolve(m.port));
    });
    return new ThreadSite(worker, port);
  }

  url(p: string, host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${p}`;
  }

  async arrivals(): Promise<Arrival[]> {
    return new Promise((resolve) => {
      const onMessage = (m: { type: string; log: Arrival[] }) => {
        if (m.type !== 'log') return;
        this.worker.off('message', onMessage);
        resolve(m.log);
      };
      this.worker.on('message', onMessage);
      this.worker.postMessage('log');
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.worker.once('message', () => resolve());
      this.worker.postMessage('close');
    });
    await this.worker.terminate();
  }
}
