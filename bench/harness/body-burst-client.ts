// The load side of body-burst.ts, in a process of its own so that building and sending the bodies costs the
// measured daemon nothing: `node body-burst-client.ts <base|stand-in> <route name> <concurrency> <rounds>`.
// Sends `concurrency` copies of one hostile body at once, `rounds` times, to the daemon at <base> or to a stand-in
// in this process, and prints one JSON line: each answer's status and how long the burst took.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A JSON object of `keys` keys no route takes: about 1.1 MB for 100,000, as the security report sent. */
function wideObject(keys: number): string {
  const parts: string[] = [];
  for (let i = 0; i < keys; i++) parts.push(`"k${i}":1`);
  return parts.join(',');
}

const KEYS = 100_000;

/** Each hostile body by the route it is sent to: the report's, and one per kind of body limit. */
export const BURSTS: Record<string, { method: string; path: string; body: () => string; headers?: Record<string, string> }> = {
  // A route of a few short fields: over its limit, refused from the Content-Length.
  search: { method: 'POST', path: '/search', body: () => `{${wideObject(KEYS)}}` },
  // Within its limit (start URLs and metadata): the free-form metadata holds too many keys.
  'crawl-jobs': { method: 'POST', path: '/api/crawl-jobs', body: () => `{"start_urls":["https://docs.example.org/"],"metadata":{${wideObject(KEYS)}}}` },
  // The REST tool endpoint: over what get_content's arguments can take.
  'mcp-execute': { method: 'POST', path: '/mcp/execute/get_content', body: () => `{${wideObject(KEYS)}}` },
  // A route that takes a large text: the first field it does not take stops the scan.
  'upload-markdown': { method: 'POST', path: '/upload/markdown', body: () => `{"content":"# hi",${wideObject(KEYS)}}` },
  // A JSON-RPC message whose tool arguments are wide.
  mcp: {
    method: 'POST',
    path: '/mcp',
    headers: { accept: 'application/json, text/event-stream' },
    body: () => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_content","arguments":{${wideObject(KEYS)}}}}`,
  },
};

/**
 * A stand-in for the daemon in this process, for a control run: it refuses each body at once, as the daemon
 * should, so the machine carries the same load from the client while the daemon itself does nothing.
 */
async function standIn(): Promise<{ base: string; close(): void }> {
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(413, { 'content-type': 'application/json', connection: 'close' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

async function main(): Promise<void> {
  const [target, name, concurrency, rounds] = process.argv.slice(2);
  const burst = BURSTS[name ?? ''];
  if (target === undefined || burst === undefined) throw new Error(`usage: body-burst-client.ts <base|stand-in> <${Object.keys(BURSTS).join('|')}> <concurrency> <rounds>`);
  const own = target === 'stand-in' ? await standIn() : undefined;
  const base = own?.base ?? target;
  const body = burst.body();
  const statuses: Record<string, number> = {};
  const started = performance.now();
  for (let round = 0; round < Number(rounds ?? 1); round++) {
    await Promise.all(
      Array.from({ length: Number(concurrency ?? 20) }, async () => {
        const status = await fetch(`${base}${burst.path}`, { method: burst.method, headers: { 'content-type': 'application/json', ...burst.headers }, body }).then(
          async (res) => {
            await res.arrayBuffer();
            return String(res.status);
          },
          // A daemon may close the connection on a body it refused before reading it.
          () => 'closed',
        );
        statuses[status] = (statuses[status] ?? 0) + 1;
      }),
    );
  }
  own?.close();
  console.log(JSON.stringify({ bytes: body.length, statuses, ms: performance.now() - started }));
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) await main();
