import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const BIN = path.resolve(import.meta.dirname, '..', 'bin', 'run.js');

type Row = Record<string, string | number>;
type Sampled = { p50: number; min: number };

function summary(samples: number[]): Sampled {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: sorted[Math.floor(sorted.length / 2)]!, min: sorted[0]! };
}

function once(args: string[]): number {
  const t = performance.now();
  execFileSync(process.execPath, args, { stdio: 'ignore' });
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

/**
 * Cold process start of the real binary: each run is a new Node process, as a user's shell would start it.
 * The search row is the first query of a new process (issue 52): it is set beside `node -e 0` from the same
 * run, the floor any Node CLI pays before its first line of its own, so a loaded machine moves both alike.
 */
export async function benchStartup(): Promise<Row[]> {
  execFileSync(process.execPath, [BIN, 'db', 'start'], { stdio: 'ignore' });
  const rows: Row[] = [];
  for (const args of [['--version'], ['--help'], ['db', 'status']]) {
    const [t] = interleaved([[BIN, ...args]], 10);
    rows.push({ command: `docdex ${args.join(' ')}`, 'p50 ms': t!.p50.toFixed(0), 'min ms': t!.min.toFixed(0), floor: '', ratio: '', goal: '< 300 ms', met: t!.p50 < 300 ? 'yes' : 'no' });
  }
  const search = [BIN, 'search', 'read file', '--limit', '5'];
  // One search first: it brings the schema up to date and fills Node's compile cache, which every later run
  // (and every later start of a user's) finds on disk.
  once(search);
  const [docdex, node] = interleaved([search, ['-e', '0']], 15) as [Sampled, Sampled];
  rows.push({
    command: 'docdex search "read file"',
    'p50 ms': docdex.p50.toFixed(0),
    'min ms': docdex.min.toFixed(0),
    floor: `node -e 0: ${node.p50.toFixed(0)} ms p50`,
    ratio: `${(docdex.p50 / node.p50).toFixed(1)}x`,
    goal: '<= 200 ms',
    met: docdex.p50 <= 200 ? 'yes' : 'no',
  });
  return rows;
}
