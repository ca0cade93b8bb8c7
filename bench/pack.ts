// Index packs at scale (issue 38): BENCH_PACK_SNIPPETS (default 1,000,000) generated snippets (bench/search.ts's
// generator and kept corpus: 40 libraries, ~500-byte snippets, 10 per page), exported with `--all` and
// imported into a fresh database, each in its own process so its peak RSS is its own. Reported: seconds,
// MB/s of the pack file, snippets/s, and peak RSS of each side, and the import rate against the bench's bulk
// ingest through the store (the search bench's generator rate on the same machine, measured here too).
// Run alone: npm run build && node --experimental-strip-types bench/pack.ts
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../dist/core/config.js';
import { createPool, resolveConnection } from '../dist/core/db/connect.js';
import type { ConnectionInfo } from '../dist/core/db/connect.js';
import { migrate } from '../dist/core/db/migrate.js';
import { exportPack } from '../dist/core/pack/export.js';
import { importPack } from '../dist/core/pack/import.js';
import { ensureDatabase, openBenchCorpus } from './search.ts';
import { vectorFloorSeconds } from './harness/vectors.ts';

type Row = Record<string, string | number>;

const TOTAL = Number(process.env.BENCH_PACK_SNIPPETS ?? 1_000_000);
// The reference: the bench's bulk ingest through the store before packs existed.
const STORE_INGEST_RATE = 1636;

interface ChildResult {
  seconds: number;
  maxRssMb: number;
}

/** One side (export or import) in a child process: `node bench/pack.ts --child <side> <db json> <file>`. */
async function runChild(side: 'export' | 'import', info: ConnectionInfo, file: string): Promise<ChildResult> {
  const self = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ['--experimental-strip-types', self, '--child', side, JSON.stringify(info), file], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`${side} child exited ${code}`);
  return JSON.parse(out.trim().split('\n').pop()!) as ChildResult;
}

async function child(side: string, infoJson: string, file: string): Promise<void> {
  const info = JSON.parse(infoJson) as ConnectionInfo;
  const pool = createPool(info, { max: 4, applicationName: `docdex-bench-pack-${side}` });
  const started = performance.now();
  if (side === 'export') await exportPack(pool, { libraries: 'all' }, createWriteStream(file));
  else await importPack(pool, createReadStream(file), { home: path.dirname(file), maxBytes: 64 * 1024 * 1024 * 1024 });
  const seconds = (performance.now() - started) / 1000;
  await pool.end();
  process.stdout.write(`${JSON.stringify({ seconds, maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
}

function ratioRow(step: string, ratio: number): Row {
  return { step, snippets: '', seconds: '', 'snippets/s': `${ratio.toFixed(1)}×`, 'MB/s': '', 'peak RSS MB': '' };
}

async function scratch(name: string): Promise<{ info: ConnectionInfo; pool: ReturnType<typeof createPool> }> {
  const info = await ensureDatabase(await resolveConnection(loadConfig()), name, true);
  const pool = createPool(info, { max: 4, applicationName: 'docdex-bench-pack' });
  await migrate(pool);
  return { info, pool };
}

export async function benchPack(): Promise<Row[]> {
  // The search bench's generated corpus, generated on first use and then reused (its ingest rate with it).
  const source = await openBenchCorpus(TOTAL);
  const target = await scratch('docdex_bench_pack_import');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-bench-pack-'));
  const file = path.join(dir, 'bench.docdex');
  try {
    const ingest = source.ingest;
    const exported = await runChild('export', source.info, file);
    const bytes = statSync(file).size;
    const imported = await runChild('import', target.info, file);
    const count = await target.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM snippets WHERE kind = 'snippet'");
    if (count.rows[0]!.n !== TOTAL) throw new Error(`imported ${count.rows[0]!.n} snippets, expected ${TOTAL}`);
    const mb = bytes / 1024 / 1024;
    const importRate = TOTAL / imported.seconds;
    // The floor: the imported rows' search vectors computed once more, on one core, nothing written.
    const floorRate = TOTAL / (await vectorFloorSeconds(target.pool));
    return [
      {
        step: `generate (bulk unnest insert, 2 writers${ingest.reused ? ', kept from an earlier run' : ''})`,
        snippets: TOTAL,
        seconds: ingest.seconds.toFixed(1),
        'snippets/s': Math.round(ingest.rate),
        'MB/s': '',
        'peak RSS MB': '',
      },
      {
        step: 'export --all',
        snippets: TOTAL,
        seconds: exported.seconds.toFixed(1),
        'snippets/s': Math.round(TOTAL / exported.seconds),
        'MB/s': (mb / exported.seconds).toFixed(1),
        'peak RSS MB': Math.round(exported.maxRssMb),
      },
      {
        step: 'import (verify, install, settle)',
        snippets: TOTAL,
        seconds: imported.seconds.toFixed(1),
        'snippets/s': Math.round(importRate),
        'MB/s': (mb / imported.seconds).toFixed(1),
        'peak RSS MB': Math.round(imported.maxRssMb),
      },
      {
        step: "floor: the imported rows' search vectors alone (one core, nothing written)",
        snippets: TOTAL,
        seconds: (TOTAL / floorRate).toFixed(1),
        'snippets/s': Math.round(floorRate),
        'MB/s': '',
        'peak RSS MB': '',
      },
      ratioRow('import vs floor (goal: 10,000 snippets/s)', importRate / floorRate),
      ratioRow(`pack file ${mb.toFixed(1)} MB; import vs the issue's store ingest (${STORE_INGEST_RATE}/s)`, importRate / STORE_INGEST_RATE),
      ratioRow('import vs generate, this run, this machine', importRate / ingest.rate),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await source.pool.end();
    await target.pool.end();
  }
}

if (process.argv[2] === '--child') {
  await child(process.argv[3]!, process.argv[4]!, process.argv[5]!);
} else if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await benchPack()) console.log(Object.values(r).map(String).join(' | '));
}
