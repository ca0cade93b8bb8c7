import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const BIN = path.resolve(import.meta.dirname, '..', 'bin', 'run.js');

function time(args: string[], runs: number): { p50: number; min: number } {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    execFileSync(process.execPath, [BIN, ...args], { stdio: 'ignore' });
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length / 2)]!, min: samples[0]! };
}

/** Cold process start of the real binary: each run is a new Node process, as a user's shell would start it. */
export async function benchStartup(): Promise<Array<Record<string, string | number>>> {
  execFileSync(process.execPath, [BIN, 'db', 'start'], { stdio: 'ignore' });
  const rows: Array<Record<string, string | number>> = [];
  for (const args of [['--version'], ['--help'], ['db', 'status']]) {
    const t = time(args, 10);
    rows.push({ command: `docdex ${args.join(' ')}`, 'p50 ms': t.p50.toFixed(0), 'min ms': t.min.toFixed(0), goal: '< 300 ms', met: t.p50 < 300 ? 'yes' : 'no' });
  }
  return rows;
}
