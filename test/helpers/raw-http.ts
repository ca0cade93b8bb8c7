import http from 'node:http';

export interface RawAnswer {
  status: number;
  body: string;
}

/**
 * One HTTP request with its path sent exactly as written (fetch would normalise `/a/../b` and `%6d`) and any
 * Host header (fetch refuses to set one; without one given, node sets the target's).
 */
export function rawHttp(base: string, method: string, rawPath: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<RawAnswer> {
  const url = new URL(base);
  const setHost = !Object.keys(headers).some((name) => name.toLowerCase() === 'host');
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path: rawPath, setHost, headers }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
