import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback port nothing listens on (bound, then released): a service that is down. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
