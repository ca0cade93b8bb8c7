import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { kernelCmdline, qemuArgs } from './qemu-args.js';
import type { VmLaunchSpec } from './qemu-args.js';
import type { AccelMode } from './settings.js';
import { SandboxUnavailableError } from './unavailable.js';

export interface AccelDecision {
  accel: 'kvm' | 'tcg';
  reason: string;
}

/** A working KVM boots the probe in well under a second; a broken one may hang, so the probe is bounded. */
export const PROBE_TIMEOUT_MS = 15_000;
const PROBE_MARKER = 'MGR-PROBE-OK';

/**
 * The host TSC rate for `tsc_early_khz`, from /proc/cpuinfo's "cpu MHz". Under TCG the guest cannot
 * calibrate its clock against the emulated PIT quickly and the boot hangs without it.
 */
export function tscKhzFromCpuinfo(cpuinfo: string): number | undefined {
  const m = /^cpu MHz\s*:\s*([0-9.]+)/m.exec(cpuinfo);
  if (!m) return undefined;
  const khz = Math.round(Number(m[1]) * 1000);
  return Number.isFinite(khz) && khz > 0 ? khz : undefined;
}

export async function hostTscKhz(): Promise<number> {
  const khz = tscKhzFromCpuinfo(await readFile('/proc/cpuinfo', 'utf8').catch(() => ''));
  if (khz === undefined) throw new SandboxUnavailableError('cannot read the host CPU frequency from /proc/cpuinfo (needed to boot under TCG)');
  return khz;
}

/**
 * `/dev/kvm` existing proves nothing: on these hosts it is a paravirtual nested KVM (kvm_pvm) that cannot run a
 * stock kernel. So `auto` boots the real kernel under KVM far enough for the init to print a marker, and uses
 * KVM only if that worked. The verdict is cached per boot files and host kernel, because a hanging probe costs
 * its whole timeout.
 */
export async function detectAccel(options: {
  mode: AccelMode;
  kernel: string;
  initramfs: string;
  bootKey: string;
  stateDir: string;
  probeTimeoutMs?: number;
  kvmDevice?: string;
  qemuBinary?: string;
}): Promise<AccelDecision> {
  const device = options.kvmDevice ?? '/dev/kvm';
  if (options.mode === 'tcg') return { accel: 'tcg', reason: 'SANDBOX_ACCEL=tcg' };
  const usable = await access(device, constants.R_OK | constants.W_OK).then(
    () => true,
    () => false,
  );
  if (options.mode === 'kvm') {
    if (!usable) throw new SandboxUnavailableError(`SANDBOX_ACCEL=kvm but ${device} is missing or not accessible`);
    return { accel: 'kvm', reason: 'SANDBOX_ACCEL=kvm' };
  }
  if (!usable) return { accel: 'tcg', reason: `${device} is missing or not accessible` };

  const cacheFile = path.join(options.stateDir, 'accel-probe.json');
  const key = `${options.bootKey}|${os.release()}`;
  const cached = await readFile(cacheFile, 'utf8')
    .then((s) => JSON.parse(s) as { key?: string; kvm?: boolean; detail?: string })
    .catch(() => undefined);
  if (cached?.key === key && typeof cached.kvm === 'boolean') {
    return cached.kvm ? { accel: 'kvm', reason: 'KVM probe boot succeeded (cached)' } : { accel: 'tcg', reason: `KVM probe boot failed (cached): ${cached.detail ?? ''}`.trim() };
  }
  const result = await probeKvm({ ...options, timeoutMs: options.probeTimeoutMs ?? PROBE_TIMEOUT_MS });
  await mkdir(options.stateDir, { recursive: true, mode: 0o700 });
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify({ key, kvm: result.ok, detail: result.detail, at: new Date().toISOString() }));
  await rename(tmp, cacheFile);
  return result.ok ? { accel: 'kvm', reason: 'KVM probe boot succeeded' } : { accel: 'tcg', reason: `KVM probe boot failed: ${result.detail}` };
}

/** Boots kernel + initramfs with `mgr.probe=1` under KVM; the init prints a marker and powers off. */
export function probeKvm(options: { kernel: string; initramfs: string; timeoutMs: number; qemuBinary?: string }): Promise<{ ok: boolean; detail: string }> {
  const spec: VmLaunchSpec = {
    name: 'mgr-probe',
    accel: 'kvm',
    kernel: options.kernel,
    initramfs: options.initramfs,
    roots: [],
    memoryMib: 128,
    cpus: 1,
    tmpfsKib: 0,
    execUser: { uid: 0, gid: 0 },
    hostname: 'mgr-probe',
    labels: {},
    probe: true,
    ...(options.qemuBinary ? { qemuBinary: options.qemuBinary } : {}),
  };
  kernelCmdline(spec);
  // The probe has no agent port, so the console can use QEMU's stdio directly.
  const [bin, ...args] = qemuArgs(spec).map((a) => (a === 'file:/dev/stderr' ? 'stdio' : a));
  return new Promise((resolve) => {
    let output = '';
    let settled = false;
    const child = spawn(bin!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const finish = (ok: boolean, detail: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve({ ok, detail });
    };
    const timer = setTimeout(() => finish(false, `no boot within ${options.timeoutMs} ms`), options.timeoutMs);
    const onOutput = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-8192);
      if (output.includes(PROBE_MARKER)) finish(true, 'ok');
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);
    child.on('error', (error) => finish(false, error.message));
    child.on('close', (code, signal) => {
      const lastLine = output.trim().split('\n').filter(Boolean).slice(-1)[0] ?? '';
      finish(output.includes(PROBE_MARKER), `qemu exited (${signal ?? code}) ${lastLine}`.trim());
    });
  });
}
