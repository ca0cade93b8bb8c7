// Hostile JSON bodies (issue 48, item 4): /health latency of the real daemon (`docdex serve`, its own process)
// while it refuses bursts of 20 copies at once of a 1.1 MB object of 100,000 keys, one burst per kind of route
// (bench/harness/body-burst-client.ts), 3 rounds each. Each row has a control: the same burst sent to a stand-in
// that refuses every body at once, so the machine carries the client's load while the daemon carries none; the
// difference is what refusing the bodies costs the daemon. Before the body limits, 20 such bodies at once held
// /health for 4.8 s (the report) and each cost the daemon about 330 ms of CPU.
// Run alone: npm run build && node --experimental-strip-types bench/bodies.ts
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../dist/core/config.js';
import { resolveConnection } from '../dist/core/db/connect.js';
import { scratchDatabase } from './crawl.ts';
import { startServe } from './daemon.ts';
import { BURST_NAMES, healthDuringBurst, percentile } from './harness/body-burst.ts';

type Row = Record<string, string | number>;

const CONCURRENCY = 20;
const ROUNDS = Number(process.env.BENCH_BODY_ROUNDS ?? 3);
const GOAL_MS = 100;

export async function benchBodies(): Promise<Row[]> {
  const db = await scratchDatabase(await resolveConnection(loadConfig()));
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'docdex-bench-bodies-'));
  const env = { ...process.env, LOG_LEVEL: 'warn', NO_COLOR: '1', DOCDEX_HOME: scratch, WORKSPACE_PATH: path.join(scratch, 'workspace'), DATABASE_URL: db.url };
  const daemon = await startServe(env).catch(async (error: unknown) => {
    rmSync(scratch, { recursive: true, force: true });
    await db.drop();
    throw error;
  });
  try {
    const rows: Row[] = [];
    for (const burst of BURST_NAMES) {
      const control = await healthDuringBurst(daemon.url, burst, { concurrency: CONCURRENCY, rounds: ROUNDS, control: true });
      const result = await healthDuringBurst(daemon.url, burst, { concurrency: CONCURRENCY, rounds: ROUNDS });
      const p95 = percentile(result.latencies, 95);
      const controlP95 = percentile(control.latencies, 95);
      rows.push({
        route: burst,
        'body KB': Math.round(result.bytes / 1024),
        bodies: `${CONCURRENCY} at once × ${ROUNDS}`,
        answers: Object.entries(result.statuses)
          .map(([status, n]) => `${n}× ${status}`)
          .join(', '),
        'burst ms': result.burstMs.toFixed(0),
        '/health p50 ms': percentile(result.latencies, 50).toFixed(1),
        '/health p95 ms': p95.toFixed(1),
        '/health max ms': Math.max(...result.latencies).toFixed(1),
        'control p95 ms': controlP95.toFixed(1),
        // What refusing the bodies adds to /health: on a loaded machine the control itself is over the goal.
        'added p95 ms': (p95 - controlP95).toFixed(1),
        goal: `p95 < ${GOAL_MS} ms`,
        met: p95 < GOAL_MS ? 'yes' : 'no',
      });
    }
    return rows;
  } finally {
    await daemon.stop();
    rmSync(scratch, { recursive: true, force: true });
    await db.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await benchBodies());
}
