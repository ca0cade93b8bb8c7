import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const BIN = path.resolve(import.meta.dirname, '..', 'bin', 'run.js');
/**
 * Another build to time beside this one, in the same interleaved runs: a checkout (e.g. `git worktree add`) of
 * the code before a change, with node_modules and `npm run build` done. Each command then gets a row for it.
 */
const BASELINE = process.env.BENCH_STARTUP_BASELINE;

type Row = Record<string, string | number>;
type Sampled = { p50: number; p90: number };

function summary(samples: number[]): Sampled {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
  return { p50: at(0.5), p90: at(0.9) };
}

function once(args: string[]): number {
  const t = performance.now();
  // A command that ends in an error (a job id that does not exist) has still loaded and run: its time counts.
  try {
    execFileSync(process.execPath, args, { stdio: 'ignore' });
  } catch {
    // exit code ignored
  }
  return performance.now() - t;
}

/**
 * Each variant run `runs` times, in turn (a, b, a, b, ...) rather than one after the other, so a change in the
 * machine's load during the run falls on every variant alike and the ratio between them holds.
 */
function interleaved(variants: string[][], runs: number): Sampled[] {
  const samples = variants.map(() => [] as number[]);
  for (let i = 0; i < runs; i++) variants.forEach((args, v) => samples[v]!.push(once(args)));
  return samples.map(summary);
}

// Counts every file a process loads as a module (ESM and CommonJS alike; Node's built-ins are not files),
// written out when it exits.
const RECORDER = `
import module from 'node:module';
import { writeFileSync } from 'node:fs';
let loaded = 0;
module.registerHooks({ load(url, context, next) { if (url.startsWith('file:')) loaded++; return next(url, context); } });
process.on('exit', () => writeFileSync(process.env.DOCDEX_BENCH_LOADED, String(loaded)));
`;

function modulesLoaded(dir: string, bin: string, args: string[]): number {
  const out = path.join(dir, 'loaded.txt');
  try {
    execFileSync(process.execPath, ['--import', pathToFileURL(path.join(dir, 'recorder.mjs')).href, bin, ...args], {
      stdio: 'ignore',
      env: { ...process.env, DOCDEX_BENCH_LOADED: out },
    });
  } catch {
    // exit code ignored, as in once()
  }
  return Number(readFileSync(out, 'utf8'));
}

/** A job id no job has: `jobs status` and `crawl status` load and run as for a real one, then report it missing. */
const NO_JOB = '00000000-0000-4000-8000-000000000000';

const COMMANDS: Array<{ args: string[]; goal?: number }> = [
  { args: ['--version'] },
  { args: ['--help'] },
  { args: ['add', '--help'] },
  { args: ['search', 'read file', '--limit', '5'], goal: 200 },
  { args: ['sources', 'list'] },
  { args: ['jobs', 'list'] },
  { args: ['jobs', 'status', NO_JOB] },
  { args: ['crawl', 'status', NO_JOB] },
  { args: ['db', 'status'] },
];

/**
 * Cold process start of the real binary, per command: each run is a new Node process, as a user's shell would
 * start it, set beside `node -e 0` from the same run (the floor any Node CLI pays before its first line of its
 * own), so a loaded machine moves both alike and the ratio holds. Modules: how many files the process loaded
 * (a bundle chunk is one), which is what a cold start mostly paid for (issue 52). The search row's goal is issue 52's.
 */
export async function benchStartup(): Promise<Row[]> {
  execFileSync(process.execPath, [BIN, 'db', 'start'], { stdio: 'ignore' });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-bench-startup-'));
  try {
    writeFileSync(path.join(dir, 'recorder.mjs'), RECORDER);
    const builds = [{ bin: BIN, label: '' }, ...(BASELINE === undefined ? [] : [{ bin: path.resolve(BASELINE, 'bin', 'run.js'), label: ' (baseline)' }])];
    const cases = COMMANDS.flatMap((command) => builds.map((build) => ({ ...command, ...build })));
    const variants = cases.map((c) => [c.bin, ...c.args]);
    // One run of each first: it brings the schema up to date and fills Node's compile cache, which every later
    // run (and every later start of a user's) finds on disk.
    for (const args of variants) once(args);
    const runs = Number(process.env.BENCH_STARTUP_RUNS ?? 10);
    const timed = interleaved([['-e', '0'], ...variants], runs);
    const floor = timed[0]!;
    const rows: Row[] = [{ command: 'node -e 0 (floor)', modules: '', 'p50 ms': floor.p50.toFixed(0), 'p90 ms': floor.p90.toFixed(0), ratio: '1.0x', goal: '', met: '' }];
    cases.forEach((c, i) => {
      const t = timed[i + 1]!;
      rows.push({
        command: `docdex ${c.args.map((a) => (a.includes(' ') ? `"${a}"` : a)).join(' ')}${c.label}`,
        modules: modulesLoaded(dir, c.bin, c.args),
        'p50 ms': t.p50.toFixed(0),
        'p90 ms': t.p90.toFixed(0),
        ratio: `${(t.p50 / floor.p50).toFixed(1)}x`,
        goal: c.goal === undefined ? '' : `<= ${c.goal} ms`,
        met: c.goal === undefined ? '' : t.p50 <= c.goal ? 'yes' : 'no',
      });
    });
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
