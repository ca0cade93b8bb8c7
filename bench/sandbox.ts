// Sandbox microVM figures (issue 12): cold boot, and per-command overhead with a warm VM, measured three ways:
// the in-process runner client (runner socket + attestation + agent round trip), the lean exec entry the
// shim calls (adds a Node process start), and the generated shim itself (adds /bin/sh). Uses the built dist/
// and the busybox test image; builds what is missing through sandbox/scripts (cached).
// Run: node --experimental-strip-types bench/sandbox.ts
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type * as Build from '../src/core/sandbox/build.js';
import type * as RunnerDaemonModule from '../src/core/sandbox/runner-daemon.js';
import type * as Service from '../src/core/sandbox/service.js';
import type * as Shim from '../src/core/sandbox/shim.js';
import type * as Settings from '../src/core/sandbox/settings.js';

type Row = Record<string, string | number>;

const ROOT = path.resolve(import.meta.dirname, '..');
const DIST = path.join(ROOT, 'dist', 'core', 'sandbox');
const CACHE = process.env.DOCDEX_SANDBOX_TEST_CACHE ?? path.join(os.tmpdir(), `docdex-sandbox-cache-${process.getuid?.() ?? 0}`);
const COMMANDS = Number(process.env.BENCH_SANDBOX_COMMANDS ?? 100);
const PROCESS_COMMANDS = Number(process.env.BENCH_SANDBOX_PROCESS_COMMANDS ?? 30);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summary(samples: number[]): { p50: string; p99: string; min: string } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50).toFixed(1), p99: percentile(s, 99).toFixed(1), min: s[0]!.toFixed(1) };
}

function runProcess(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env }, (error) => (error ? reject(error) : resolve(0)));
  });
}

export async function benchSandbox(): Promise<Row[]> {
  const build = (await import(pathToFileURL(path.join(DIST, 'build.js')).href)) as typeof Build;
  const daemonMod = (await import(pathToFileURL(path.join(DIST, 'runner-daemon.js')).href)) as typeof RunnerDaemonModule;
  const service = (await import(pathToFileURL(path.join(DIST, 'service.js')).href)) as typeof Service;
  const shimMod = (await import(pathToFileURL(path.join(DIST, 'shim.js')).href)) as typeof Shim;
  const settingsMod = (await import(pathToFileURL(path.join(DIST, 'settings.js')).href)) as typeof Settings;

  const home = await mkdtemp(path.join(os.tmpdir(), 'dxbench-'));
  const ws = await mkdtemp(path.join(os.tmpdir(), 'dxbws-'));
  await mkdir(path.join(ws, 'repos', 'app'), { recursive: true });
  await mkdir(path.join(home, 'sandbox'), { recursive: true });
  for (const sub of ['kernel', 'boot', 'images']) {
    await mkdir(path.join(CACHE, sub), { recursive: true });
    await symlink(path.join(CACHE, sub), path.join(home, 'sandbox', sub));
  }
  const cacheDir = path.join(home, 'sandbox');
  const boot = await build.ensureBootFiles(cacheDir);
  const image = await build.buildImage(cacheDir, { flavor: 'busybox', name: 'docdex-test' });
  const accel = (process.env.SANDBOX_ACCEL as 'auto' | 'kvm' | 'tcg' | undefined) ?? 'auto';
  const settings = {
    workspacePath: ws,
    roots: settingsMod.sandboxRoots(ws),
    image: image.ref,
    accel,
    execUser: undefined,
    startTimeoutMs: 300_000,
    memoryMib: 512,
    cpus: 1,
    cacheDir,
    stateDir: path.join(cacheDir, 'run'),
  };
  let daemon = await daemonMod.RunnerDaemon.start({ stateDir: settings.stateDir });
  const rows: Row[] = [];
  try {
    const exec = async (cmd: string): Promise<number> => {
      const sink = new PassThrough();
      sink.resume();
      const outcome = await service.sandboxExec(
        settings,
        { workdir: Buffer.from(path.join(ws, 'repos', 'app')), env: [], argv: [Buffer.from('sh'), Buffer.from('-c'), Buffer.from(cmd)], timeoutMs: 0 },
        { stdout: sink, stderr: sink },
      ).done;
      if (outcome.exitCode !== 0) throw new Error(`bench command failed: ${outcome.unavailable ?? outcome.exitCode}`);
      return outcome.exitCode;
    };

    // Cold boot: from the first request to a booted, attested VM (boot files and image already built).
    const coldSamples: number[] = [];
    for (let i = 0; i < 3; i++) {
      // A fresh runner each time (its VM dies with it), so every sample is a real cold boot.
      await daemon.close();
      daemon = await daemonMod.RunnerDaemon.start({ stateDir: settings.stateDir });
      const t = performance.now();
      await service.sandboxUp(settings);
      coldSamples.push(performance.now() - t);
    }
    const status = await service.sandboxStatus(settings);
    const cold = summary(coldSamples);
    rows.push({
      measure: 'cold boot to attested VM (sandbox up)',
      n: coldSamples.length,
      'p50 ms': cold.p50,
      'p99 ms': cold.p99,
      'min ms': cold.min,
      accel: status.accel ?? '?',
      note: `kernel ${boot.kernelRelease}, 1 vCPU, 512 MiB`,
    });

    await exec('true');
    const inProcess: number[] = [];
    for (let i = 0; i < COMMANDS; i++) {
      const t = performance.now();
      await exec('true');
      inProcess.push(performance.now() - t);
    }
    const ip = summary(inProcess);
    rows.push({
      measure: 'warm exec `true`, in-process client (socket + attestation + agent)',
      n: COMMANDS,
      'p50 ms': ip.p50,
      'p99 ms': ip.p99,
      'min ms': ip.min,
      accel: status.accel ?? '?',
      note: 'issue estimate for a shell-loop agent: 60-300 ms',
    });

    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      DOCDEX_HOME: home,
      WORKSPACE_PATH: ws,
      SANDBOX_IMAGE: image.ref,
      SANDBOX_MEMORY_MB: '512',
      SANDBOX_CPUS: '1',
      SANDBOX_ACCEL: accel,
    };
    const execMain = path.join(DIST, 'exec-main.js');
    const viaProcess: number[] = [];
    for (let i = 0; i < PROCESS_COMMANDS; i++) {
      const t = performance.now();
      await runProcess(process.execPath, [execMain, 'sandbox', 'exec', '-w', path.join(ws, 'repos', 'app'), '--', 'true'], env);
      viaProcess.push(performance.now() - t);
    }
    const vp = summary(viaProcess);
    rows.push({
      measure: 'warm exec `true`, exec-main.js process (what the shim runs)',
      n: PROCESS_COMMANDS,
      'p50 ms': vp.p50,
      'p99 ms': vp.p99,
      'min ms': vp.min,
      accel: status.accel ?? '?',
      note: 'includes a Node start',
    });

    const shim = await shimMod.writeShim(path.join(home, 'plugins'), { runner: [process.execPath, execMain], hostShell: '/bin/sh' });
    const viaShim: number[] = [];
    for (let i = 0; i < PROCESS_COMMANDS; i++) {
      const t = performance.now();
      await runProcess(shim, ['-c', 'true'], { ...env, MGR_SANDBOX_WORKDIR: path.join(ws, 'repos', 'app') });
      viaShim.push(performance.now() - t);
    }
    const vs = summary(viaShim);
    rows.push({
      measure: 'warm exec `true` through the generated shim',
      n: PROCESS_COMMANDS,
      'p50 ms': vs.p50,
      'p99 ms': vs.p99,
      'min ms': vs.min,
      accel: status.accel ?? '?',
      note: 'end to end as the agent server sees it',
    });

    const hostShell: number[] = [];
    for (let i = 0; i < PROCESS_COMMANDS; i++) {
      const t = performance.now();
      await runProcess('/bin/sh', ['-c', 'true'], env);
      hostShell.push(performance.now() - t);
    }
    const hs = summary(hostShell);
    rows.push({
      measure: 'baseline: /bin/sh -c true on the host',
      n: PROCESS_COMMANDS,
      'p50 ms': hs.p50,
      'p99 ms': hs.p99,
      'min ms': hs.min,
      accel: '-',
      note: `${os.cpus().length} host cores, load ${os.loadavg()[0]!.toFixed(1)}`,
    });
  } finally {
    await daemon.close();
    await rm(home, { recursive: true, force: true });
    await rm(ws, { recursive: true, force: true });
  }
  return rows;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await benchSandbox();
  console.table(rows);
}
