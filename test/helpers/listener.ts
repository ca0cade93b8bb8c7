import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * "Secret" listeners for the outbound tests: they sit on loopback addresses the allow-list does not name (Linux
 * routes all of 127/8 to lo) and count every TCP connection they accept, so a test can show that none arrived,
 * not merely that nothing was stored.
 */

export interface Listener {
  host: string;
  port: number;
  url: string;
  connections: number;
  paths: string[];
  close(): Promise<void>;
}

/** An HTTP listener that counts connections at the TCP level ('connection'), before any request is read. */
export async function listen(host: string, handle: (req: http.IncomingMessage, res: http.ServerResponse, self: Listener) => void): Promise<Listener> {
  const self = { host, port: 0, url: '', connections: 0, paths: [] as string[] } as Listener;
  const server = http.createServer((req, res) => {
    self.paths.push(req.url ?? '');
    handle(req, res, self);
  });
  server.on('connection', () => self.connections++);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
  self.port = (server.address() as AddressInfo).port;
  self.url = `http://${host.includes(':') ? `[${host}]` : host}:${self.port}`;
  self.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return self;
}
