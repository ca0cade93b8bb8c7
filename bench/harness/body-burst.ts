import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BURSTS } from './body-burst-client.ts';

/**
 * How long the daemon's /health takes while it refuses bursts of hostile JSON bodies (issue 48): for one kind of
 * body, `concurrency` copies at once from another process (body-burst-client.ts), `rounds` times, while this
 * process polls /health every POLL_MS. Shared by `npm run bench` (bench/bodies.ts, the real `docdex serve`) and
 * test/daemon/body-limits.test.ts (the daemon in the test's process).
 */

const CLIENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'body-burst-client.ts');
const POLL_MS = 25;

export const BURST_NAMES = Object.keys(BURSTS);

export interface HealthDuringBurst {
  burst: string;
  /** Bytes of each body sent. */
  bytes: number;
  /** Answers by HTTP status ('closed' when the daemon closed the connection instead). */
  statuses: Record<string, number>;
  /** How long the whole burst took, from the client's side. */
  burstMs: number;
  /** /health latencies during the burst, ms, each counted from when the poll was due. */
  latencies: number[];
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((sorted.length * p) / 100) - 1))]!;
}

/**
 * Polls /health until `done` resolves. A poll's latency runs from the moment it was due: a blocked event loop
 * delays the answer (and, when the daemon shares this process, the send), and that delay is what a client sees.
 * A poll that waited L ms also stands for the polls due meanwhile (L - POLL_MS, L - 2 POLL_MS, ...), as latency
 * recorders correct for a stalled sender.
 */
async function pollHealth(base: string, done: Promise<unknown>): Promise<number[]> {
  let finished = false;
  void done.finally(() => (finished = true));
  const latencies: number[] = [];
  while (!finished || latencies.length === 0) {
    const due = performance.now() + POLL_MS;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const res = await fetch(`${base}/health`);
    await res.arrayBuffer();
    const latency = performance.now() - due;
    for (let missed = latency; missed > 0; missed -= POLL_MS) latencies.push(missed);
    if (latency <= 0) latencies.push(0);
  }
  return latencies;
}

function runClient(base: string, burst: string, concurrency: number, rounds: number): Promise<{ bytes: number; statuses: Record<string, number>; ms: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLIENT, base, burst, String(concurrency), String(rounds)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve(JSON.parse(out) as { bytes: number; statuses: Record<string, number>; ms: number });
      else reject(new Error(`body-burst-client ${burst} exited with ${code}: ${err.slice(0, 500)}`));
    });
  });
}

/**
 * /health latencies while `concurrency` bodies of `burst` are sent at once, `rounds` times. With `control`, the
 * bodies go to a stand-in in the client's process instead of the daemon: the same load on the machine, none on
 * the daemon, so the difference between the two runs is what refusing the bodies costs the daemon.
 */
export async function healthDuringBurst(base: string, burst: string, options: { concurrency: number; rounds: number; control?: boolean }): Promise<HealthDuringBurst> {
  const client = runClient(options.control === true ? 'stand-in' : base, burst, options.concurrency, options.rounds);
  const latencies = await pollHealth(
    base,
    client.catch(() => undefined),
  );
  const result = await client;
  return { burst, bytes: result.bytes, statuses: result.statuses, burstMs: result.ms, latencies };
}

/** The burst's answers alone, with no /health polls meanwhile: what the daemon spends on it is then all its own. */
export async function sendBurst(base: string, burst: string, options: { concurrency: number; rounds: number }): Promise<{ bytes: number; statuses: Record<string, number>; ms: number }> {
  return runClient(base, burst, options.concurrency, options.rounds);
}
