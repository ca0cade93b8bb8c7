import { chmod, mkdir, rm } from 'node:fs/promises';
import net from 'node:net';
import lockfile from 'proper-lockfile';
import { detectAccel, hostTscKhz } from './accel.js';
import type { AccelDecision } from './accel.js';
import { compareAttestation, describeMismatches, parseAttestation } from './attest.js';
import type { LiveFacts, Mismatch } from './attest.js';
import { ensureBootFiles } from './build.js';
import type { BootFiles } from './build.js';
import { parseImageRef, parseRegistryImage, requireImage } from './images.js';
import { ensureRegistryImage } from './oci-pull.js';
import { FrameDecoder, FrameType, decodeRequest, encodeExit, encodeFrame } from './protocol.js';
import type { ExecRequest } from './protocol.js';
import { VM_NAME } from './settings.js';
import { SandboxUnavailableError, UNAVAILABLE_PREFIX, unavailableMessage } from './unavailable.js';
import { MicroVm, createScratchDisk, hostLayout } from './vm.js';
import type { VmConfig } from './vm-config.js';
import { wantedFacts } from './vm-config.js';
import { runnerPaths } from './paths.js';
import type { RunnerPaths } from './paths.js';

/** A daemon with no VM and no clients exits after this long, so test runs and aborted sessions leave nothing behind. */
export const IDLE_EXIT_MS = 10 * 60_000;
const ATTEST_TIMEOUT_MS = 10_000;
/** Bound on what one client may have queued before the agent port is paused for everyone. */
const CLIENT_HIGH_WATER = 4 * 1024 * 1024;

export interface VmStatus {
  name: string;
  state: 'running' | 'stopped';
  runnerPid: number;
  pid?: number;
  qemuPid?: number;
  accel?: string;
  accelReason?: string;
  startedAt?: string;
  agent?: string;
  config?: VmConfig;
  /** `sha256:<hex>`: what the image reference resolved to when the VM booted (a local tree digest or a registry manifest digest). */
  imageDigest?: string;
  /** Why the last VM ended when nobody asked it to. */
  lastLoss?: string;
  /** Present when the request carried a config: the live comparison. */
  attestation?: { facts: LiveFacts; mismatches: Mismatch[] };
}

export type RunnerRequest = { op: 'status'; config?: VmConfig } | { op: 'up'; config: VmConfig } | { op: 'down' } | { op: 'exec'; config: VmConfig };

export type RunnerReply = { ok: true; result: unknown } | { ok: false; error: { message: string; code: string; hint?: string } };

function errorReply(error: unknown): RunnerReply {
  if (error instanceof SandboxUnavailableError) {
    return { ok: false, error: { message: error.message, code: error.code, ...(error.hint ? { hint: error.hint } : {}) } };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { ok: false, error: { message: message.startsWith(UNAVAILABLE_PREFIX) ? message : unavailableMessage(message), code: 'sandbox_unavailable' } };
}

/**
 * The host-side runner: one long-lived process that owns the `mgr-workspace` VM (QEMU inside bubblewrap) and
 * the agent port, and serves short-lived clients (`docdex sandbox exec` from the shim, up/down/status) on a
 * 0600 unix socket in the state directory. A lock file makes it a singleton per state directory.
 *
 * Every request carries the wanted VmConfig; before a VM is reused it is attested against it, and a
 * mismatch replaces it. A VM that dies unexpectedly fails the commands running in it and the next request
 * (fail closed, once, so the loss is visible); the request after that boots a fresh VM.
 */
export class RunnerDaemon {
  readonly paths: RunnerPaths;
  readonly closed: Promise<void>;
  private server!: net.Server;
  private releaseLock: (() => Promise<void>) | undefined;
  private vm: MicroVm | undefined;
  private vmConfig: VmConfig | undefined;
  /** The digest the running VM's image reference resolved to. */
  private imageDigest: string | undefined;
  private accel: AccelDecision | undefined;
  private lost: string | undefined;
  private lastLoss: string | undefined;
  private readonly expectedStops = new WeakSet<MicroVm>();
  private readonly bootFiles = new Map<string, Promise<BootFiles>>();
  private chain: Promise<unknown> = Promise.resolve();
  private connections = new Set<net.Socket>();
  private idleTimer: NodeJS.Timeout | undefined;
  private closing = false;
  private resolveClosed!: () => void;

  private constructor(
    stateDir: string,
    private readonly options: { log: (line: string) => void; idleExitMs: number },
  ) {
    this.paths = runnerPaths(stateDir);
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
  }

  static async start(options: { stateDir: string; log?: (line: string) => void; idleExitMs?: number }): Promise<RunnerDaemon> {
    const daemon = new RunnerDaemon(options.stateDir, { log: options.log ?? (() => undefined), idleExitMs: options.idleExitMs ?? IDLE_EXIT_MS });
    await daemon.listen();
    return daemon;
  }

  private log(line: string): void {
    this.options.log(`${new Date().toISOString()} ${line}`);
  }

  private async listen(): Promise<void> {
    await mkdir(this.paths.stateDir, { recursive: true, mode: 0o700 });
    await chmod(this.paths.stateDir, 0o700);
    try {
      this.releaseLock = await lockfile.lock(this.paths.stateDir, {
        lockfilePath: this.paths.lock,
        realpath: false,
        stale: 10_000,
        update: 2_000,
        retries: 0,
        onCompromised: (error) => {
          this.log(`lock compromised (${error.message}); shutting down`);
          this.releaseLock = undefined;
          void this.close();
        },
      });
    } catch (error) {
      throw new Error(`another sandbox runner holds ${this.paths.lock}`, { cause: error });
    }
    await rm(this.paths.socket, { force: true });
    this.server = net.createServer((socket) => this.onConnection(socket));
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.paths.socket, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    await chmod(this.paths.socket, 0o600);
    this.log(`runner ${process.pid} listening on ${this.paths.socket}`);
    this.touchIdle();
  }

  private touchIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (!this.vm && this.connections.size === 0) {
        this.log('idle with no VM; exiting');
        void this.close();
      } else {
        this.touchIdle();
      }
    }, this.options.idleExitMs);
    this.idleTimer.unref();
  }

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private onConnection(socket: net.Socket): void {
    this.connections.add(socket);
    this.touchIdle();
    const decoder = new FrameDecoder();
    let started = false;
    let signalHandler: ((signal: number) => void) | undefined;
    const pendingSignals: number[] = [];
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.connections.delete(socket);
      this.touchIdle();
    });
    socket.on('data', (chunk: Buffer) => {
      let frames;
      try {
        frames = decoder.push(chunk);
      } catch {
        socket.destroy();
        return;
      }
      for (const frame of frames) {
        if (frame.type === FrameType.clientSignal && frame.payload.length >= 4) {
          const signal = frame.payload.readUInt32LE(0);
          if (signalHandler) signalHandler(signal);
          else pendingSignals.push(signal);
        } else if (frame.type === FrameType.request && !started) {
          started = true;
          let decoded;
          try {
            decoded = decodeRequest(frame.payload);
          } catch (error) {
            void this.reply(socket, errorReply(error));
            continue;
          }
          const header = decoded.header as RunnerRequest;
          void this.handle(socket, header, decoded.exec, (handler) => {
            signalHandler = handler;
            for (const s of pendingSignals.splice(0)) handler(s);
          }).catch((error: unknown) => {
            this.log(`request ${header.op} failed: ${(error as Error).message}`);
            void this.reply(socket, errorReply(error));
          });
        }
      }
    });
  }

  private reply(socket: net.Socket, reply: RunnerReply): Promise<void> {
    return new Promise((resolve) => {
      if (socket.destroyed) resolve();
      else socket.end(encodeFrame(FrameType.result, 0, Buffer.from(JSON.stringify(reply))), () => resolve());
    });
  }

  private async handle(socket: net.Socket, request: RunnerRequest, exec: ExecRequest | undefined, onSignal: (handler: (signal: number) => void) => void): Promise<void> {
    switch (request.op) {
      case 'status': {
        const status = await this.serialize(() => this.status(request.config));
        await this.reply(socket, { ok: true, result: status });
        return;
      }
      case 'up': {
        await this.serialize(() => this.ensureVm(request.config));
        await this.reply(socket, { ok: true, result: await this.serialize(() => this.status(request.config)) });
        return;
      }
      case 'down': {
        const stopped = await this.serialize(() => this.stopVm('down requested'));
        await this.reply(socket, { ok: true, result: { stopped } });
        void this.close();
        return;
      }
      case 'exec': {
        if (!exec) throw new Error('exec request without a command');
        await this.runExec(socket, request.config, exec, onSignal);
        return;
      }
      default:
        throw new Error(`unknown runner request ${(request as { op: string }).op}`);
    }
  }

  private async runExec(socket: net.Socket, config: VmConfig, exec: ExecRequest, onSignal: (handler: (signal: number) => void) => void): Promise<void> {
    const vm = await this.serialize(() => this.ensureVm(config));
    const sink = {
      onStarted: (pid: number) => {
        const b = Buffer.alloc(4);
        b.writeUInt32LE(pid, 0);
        socket.write(encodeFrame(FrameType.started, 0, b));
      },
      onStdout: (chunk: Buffer) => {
        socket.write(encodeFrame(FrameType.stdout, 0, chunk));
        return socket.writableLength < CLIENT_HIGH_WATER;
      },
      onStderr: (chunk: Buffer) => {
        socket.write(encodeFrame(FrameType.stderr, 0, chunk));
        return socket.writableLength < CLIENT_HIGH_WATER;
      },
    };
    socket.on('drain', () => vm.channel.resume(sink));
    const running = vm.channel.exec(exec, sink);
    let finished = false;
    onSignal((signal) => running.signal(signal));
    // A client that goes away (the shim was killed) must not leave its command running in the guest.
    socket.once('close', () => {
      if (!finished) {
        vm.channel.resume(sink);
        try {
          running.signal(9);
        } catch {
          // the VM is already gone
        }
      }
    });
    try {
      const end = await running.done;
      finished = true;
      if (!socket.destroyed) socket.end(encodeFrame(FrameType.exit, 0, encodeExit(end)));
    } catch (error) {
      finished = true;
      // The port closes a moment before QEMU's exit is reported; give the exit a chance to land first.
      if (vm.channel.closed) await Promise.race([vm.exited, new Promise((r) => setTimeout(r, 2000))]);
      const reason = vm.alive ? (error as Error).message : `the microVM ${VM_NAME} stopped while the command was running`;
      await this.reply(socket, errorReply(new SandboxUnavailableError(reason)));
    }
  }

  private async attestVm(vm: MicroVm, config: VmConfig): Promise<{ facts: LiveFacts; mismatches: Mismatch[] }> {
    const facts = parseAttestation(await vm.channel.attest(ATTEST_TIMEOUT_MS));
    return { facts, mismatches: compareAttestation(wantedFacts(config), facts) };
  }

  private async status(config: VmConfig | undefined): Promise<VmStatus> {
    const vm = this.vm;
    const base: VmStatus = { name: VM_NAME, state: vm?.alive ? 'running' : 'stopped', runnerPid: process.pid, ...(this.lastLoss ? { lastLoss: this.lastLoss } : {}) };
    if (!vm?.alive) return base;
    const qemuPid = await vm.qemuPid();
    const status: VmStatus = {
      ...base,
      ...(vm.pid ? { pid: vm.pid } : {}),
      ...(qemuPid ? { qemuPid } : {}),
      ...(this.accel ? { accel: this.accel.accel, accelReason: this.accel.reason } : {}),
      startedAt: new Date(vm.startedAt).toISOString(),
      agent: vm.agentVersion,
      ...(this.vmConfig ? { config: this.vmConfig } : {}),
      ...(this.imageDigest ? { imageDigest: this.imageDigest } : {}),
    };
    if (config) status.attestation = await this.attestVm(vm, config);
    return status;
  }

  /** Must run serialized. Returns a VM that passed attestation against `config` just now. */
  private async ensureVm(config: VmConfig): Promise<MicroVm> {
    if (this.lost) {
      const reason = this.lost;
      this.lost = undefined;
      throw new SandboxUnavailableError(`the microVM ${VM_NAME} stopped unexpectedly (${reason}); the next command starts a fresh one`);
    }
    const current = this.vm;
    if (current?.alive) {
      let mismatches: Mismatch[];
      try {
        mismatches = (await this.attestVm(current, config)).mismatches;
      } catch (error) {
        mismatches = [{ field: 'agent', want: 'an answer', got: (error as Error).message }];
      }
      if (mismatches.length === 0) return current;
      this.log(`attestation mismatch, recreating ${VM_NAME}: ${describeMismatches(mismatches)}`);
      await this.stopVm('attestation mismatch');
    }
    return this.createVm(config);
  }

  /**
   * The image file of `config.imageRef`: a local build from the store, or a registry image pulled into it first.
   * Also the digest it resolved to, which status reports next to the reference attestation compares, and what is
   * left for the boot: SANDBOX_START_TIMEOUT_MS bounds pull and boot together (spec: Guest image).
   */
  private async imageFile(config: VmConfig): Promise<{ file: string; digest: string; bootTimeoutMs: number }> {
    const local = parseImageRef(config.imageRef);
    if (local) return { file: await requireImage(config.cacheDir, local), digest: `sha256:${local.digest}`, bootTimeoutMs: config.startTimeoutMs };
    const registry = parseRegistryImage(config.imageRef);
    if (!registry) throw new SandboxUnavailableError(`SANDBOX_IMAGE ${config.imageRef} is neither pinned (name@sha256:<digest>) nor a registry reference`);
    const deadline = Date.now() + config.startTimeoutMs;
    const pulled = await ensureRegistryImage(
      config.cacheDir,
      registry.oci,
      { allowHosts: config.allowHosts ?? [] },
      { onLog: (line) => this.log(line), signal: AbortSignal.timeout(config.startTimeoutMs) },
    );
    if (pulled.pulled) this.log(`pulled ${pulled.ref} (${pulled.digest})`);
    return { file: pulled.path, digest: pulled.digest, bootTimeoutMs: pulled.pulled ? Math.max(1, deadline - Date.now()) : config.startTimeoutMs };
  }

  private async createVm(config: VmConfig): Promise<MicroVm> {
    const { file: imageFile, digest, bootTimeoutMs } = await this.imageFile(config);
    let bootPromise = this.bootFiles.get(config.cacheDir);
    if (!bootPromise) {
      bootPromise = ensureBootFiles(config.cacheDir, { onLog: (line) => this.log(line) });
      this.bootFiles.set(config.cacheDir, bootPromise);
      bootPromise.catch(() => this.bootFiles.delete(config.cacheDir));
    }
    let boot: BootFiles;
    try {
      boot = await bootPromise;
    } catch (error) {
      throw new SandboxUnavailableError(`cannot build the microVM kernel and initramfs: ${(error as Error).message}`);
    }
    const accel = await detectAccel({ mode: config.accel, kernel: boot.kernel, initramfs: boot.initramfs, bootKey: boot.key, stateDir: this.paths.stateDir });
    this.accel = accel;
    const tscKhz = accel.accel === 'tcg' ? await hostTscKhz() : undefined;
    await createScratchDisk(this.paths.scratch);
    const runAs = process.getuid?.() === 0 && config.execUser.uid !== 0 ? config.execUser : undefined;
    const started = Date.now();
    this.log(`starting ${VM_NAME} (${accel.accel}: ${accel.reason}; image ${config.imageRef} = ${digest}; ${config.memoryMib} MiB, ${config.cpus} cpu)`);
    this.imageDigest = digest;
    let vm: MicroVm;
    try {
      vm = await MicroVm.start(
        {
          name: VM_NAME,
          accel: accel.accel,
          kernel: boot.kernel,
          initramfs: boot.initramfs,
          image: imageFile,
          roots: config.roots,
          memoryMib: config.memoryMib,
          cpus: config.cpus,
          tmpfsKib: config.tmpfsKib,
          execUser: config.execUser,
          hostname: config.name,
          labels: config.labels,
          ...(tscKhz ? { tscKhz } : {}),
        },
        { layout: await hostLayout(), timeoutMs: bootTimeoutMs, consoleLog: this.paths.console, scratch: this.paths.scratch, ...(runAs ? { runAs } : {}) },
      );
    } catch (error) {
      await rm(this.paths.scratch, { force: true });
      throw new SandboxUnavailableError(`cannot boot the microVM ${VM_NAME}: ${(error as Error).message}`);
    }
    this.log(`${VM_NAME} booted in ${Date.now() - started} ms (${vm.agentVersion})`);
    void vm.exited.then((exit) => {
      if (this.vm === vm) {
        this.vm = undefined;
        this.vmConfig = undefined;
      }
      if (!this.expectedStops.has(vm)) {
        const reason = `QEMU exited: ${exit.signal ?? `code ${String(exit.code)}`}`;
        this.lost = reason;
        this.lastLoss = `${new Date().toISOString()} ${reason}`;
        this.log(`${VM_NAME} stopped unexpectedly (${reason})`);
        void rm(this.paths.scratch, { force: true });
      }
      this.touchIdle();
    });
    // A VM we just made must match; if it does not, recreating again would not help.
    let verdict: { facts: LiveFacts; mismatches: Mismatch[] };
    try {
      verdict = await this.attestVm(vm, config);
    } catch (error) {
      await this.kill(vm);
      throw new SandboxUnavailableError(`the freshly created microVM could not be attested: ${(error as Error).message}`);
    }
    if (verdict.mismatches.length > 0) {
      await this.kill(vm);
      throw new SandboxUnavailableError(`the freshly created microVM failed attestation: ${describeMismatches(verdict.mismatches)}`);
    }
    this.vm = vm;
    this.vmConfig = config;
    this.lost = undefined;
    return vm;
  }

  private async kill(vm: MicroVm): Promise<void> {
    this.expectedStops.add(vm);
    await vm.kill();
    await rm(this.paths.scratch, { force: true });
  }

  /** Must run serialized. */
  private async stopVm(reason: string): Promise<boolean> {
    const vm = this.vm;
    this.vm = undefined;
    this.vmConfig = undefined;
    this.lost = undefined;
    if (!vm?.alive) return false;
    this.log(`stopping ${VM_NAME}: ${reason}`);
    await this.kill(vm);
    return true;
  }

  /** Stops the VM, closes the socket and releases the lock. Safe to call more than once. */
  async close(): Promise<void> {
    if (this.closing) return this.closed;
    this.closing = true;
    clearTimeout(this.idleTimer);
    await this.serialize(() => this.stopVm('runner shutting down')).catch(() => undefined);
    for (const socket of this.connections) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.paths.socket, { force: true });
    await this.releaseLock?.().catch(() => undefined);
    this.log('runner stopped');
    this.resolveClosed();
    return this.closed;
  }
}
