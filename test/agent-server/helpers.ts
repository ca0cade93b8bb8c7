import { createECDH, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A deterministic OpenAI-compatible model for opencode (a custom provider over @ai-sdk/openai-compatible).
 * A user message containing `@@<tool> <json>` makes the "model" call that tool with those arguments; the
 * turn after a tool result answers `RESULT <tool output>`; anything else (titles, plain prompts) is `ok`.
 */
export interface StubModel {
  url: string;
  requests: Array<{ messages: Array<{ role: string; content: unknown }>; tools: Array<{ function: { name: string } }> }>;
  close(): Promise<void>;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c: { text?: string }) => c.text ?? '').join('');
  return '';
}

export async function startStubModel(): Promise<StubModel> {
  const requests: StubModel['requests'] = [];
  let n = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = chunks.length
        ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: string; messages?: StubModel['requests'][number]['messages']; tools?: StubModel['requests'][number]['tools'] })
        : {};
      const messages = body.messages ?? [];
      requests.push({ messages, tools: body.tools ?? [] });
      const last = messages.at(-1);
      const id = `chatcmpl-${++n}`;
      const base = { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model ?? 'stub' };
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
      const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
      const text = contentText(last?.content);
      const directive = /@@(\w+) (\{.*\})/s.exec(text);
      if (last?.role === 'user' && directive && (body.tools ?? []).some((t) => t.function.name === directive[1])) {
        send({
          ...base,
          choices: [
            { index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: `call_${n}`, type: 'function', function: { name: directive[1], arguments: directive[2] } }] }, finish_reason: null },
          ],
        });
        send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage });
      } else {
        const answer = last?.role === 'tool' ? `RESULT ${text}` : 'ok';
        send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: answer }, finish_reason: null }] });
        send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage });
      }
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The opencode configuration that makes the stub the only model, with nothing shared or fetched. */
export function stubModelConfig(stubUrl: string): Record<string, unknown> {
  return {
    $schema: 'https://opencode.ai/config.json',
    model: 'stub/stub-model',
    small_model: 'stub/stub-model',
    share: 'disabled',
    autoupdate: false,
    provider: {
      stub: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Stub',
        options: { baseURL: stubUrl, apiKey: 'stub-key' },
        models: { 'stub-model': { name: 'Stub model', tool_call: true } },
      },
    },
  };
}

export function writeAgentConfig(workspaceRoot: string, config: Record<string, unknown>): void {
  const dir = path.join(workspaceRoot, '.config', 'opencode');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'opencode.jsonc'), `${JSON.stringify(config, null, 2)}\n`);
}

/** A loopback port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Every regular file under `dir` (symlinks not followed) whose bytes contain `needle`. */
export function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const want = Buffer.from(needle);
  const walk = (d: string) => {
    let entries: string[];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const name of entries) {
      const file = path.join(d, name);
      const st = statSync(file, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(file);
      else if (st.isFile() && readFileSync(file).includes(want)) hits.push(file);
    }
  };
  walk(dir);
  return hits;
}

/** Keys a browser would hand over in a PushSubscription. */
export function deviceKeys(): { p256dh: string; auth: string } {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') };
}

export interface FakePush {
  url: string;
  received: Array<{ url: string; headers: http.IncomingHttpHeaders; bytes: number }>;
  close(): Promise<void>;
}

/** A push service on 127.0.0.1 that accepts every message (201). */
export async function startFakePush(): Promise<FakePush> {
  const received: FakePush['received'] = [];
  const server = http.createServer((req, res) => {
    let bytes = 0;
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, bytes });
      res.writeHead(201).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

export async function waitUntil<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** One opencode HTTP call in the instance of `directory`; throws on a non-2xx answer. */
export async function opencodeCall(agentUrl: string, method: string, route: string, directory: string, body?: unknown): Promise<any> {
  const res = await fetch(`${agentUrl}${route}${route.includes('?') ? '&' : '?'}directory=${encodeURIComponent(directory)}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route} answered ${res.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

export interface ShellResult {
  output: string;
  metadata: Record<string, unknown>;
}

/** `!command` (POST /session/:id/shell, no model involved) in a fresh session in `directory`: the shell part's output. */
export async function sessionShell(agentUrl: string, directory: string, command: string): Promise<ShellResult> {
  const session = (await opencodeCall(agentUrl, 'POST', '/session', directory, {})) as { id: string };
  await opencodeCall(agentUrl, 'POST', `/session/${session.id}/shell`, directory, { agent: 'build', command });
  const messages = (await opencodeCall(agentUrl, 'GET', `/session/${session.id}/message`, directory)) as Array<{
    parts: Array<{ type: string; state?: { output?: string; metadata?: Record<string, unknown> } }>;
  }>;
  const part = messages.flatMap((m) => m.parts).find((p) => p.type === 'tool');
  if (!part?.state) throw new Error(`no shell part in ${JSON.stringify(messages)}`);
  return { output: part.state.output ?? String(part.state.metadata?.output ?? ''), metadata: part.state.metadata ?? {} };
}
