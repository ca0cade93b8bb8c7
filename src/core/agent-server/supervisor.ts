import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, renameSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { mkdir, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { isUserError } from '../errors.js';

/**
 * Runs opencode as a supervised child: spawns `opencode serve`, waits until it answers, watches it, and
 * restarts it with exponential backoff when it exits or stops answering. Everything that decides *what*
 * to run (binary, arguments, environment, files to write first) comes from `prepare`, called before every
 * spawn, so a restart picks up a rotated token or a changed sandbox setting.
 */

export type AgentServerState = 'stopped' | 'starting' | 'running' | 'backoff' | 'stopping' | 'failed';

export interface AgentServerStatus {
  state: AgentServerState;
  pid: number | null;
  url: string;
  startedAt: number | null;
  /** Restarts after a crash or a hang since the supervisor was started. */
  restarts: number;
  lastExit: string | null;
  lastError: string | null;
  /** When the next attempt is due, in backoff. */
  retryAt: number | null;
}

/** How a start check reaches the server it checks. */
export interface AgentServerEndpoint {
  url: string;
  /** HTTP basic auth when the server has a password; empty otherwise. */
  headers: Record<string, string>;
  pid: number | undefined;
}

export interface SpawnPlan {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /**
   * Runs once the server answers, before it counts as running. A UserError stops it for good (state failed,
   * the message as lastError); any other error kills it and retries with backoff.
   */
  verify?(server: AgentServerEndpoint): Promise<void>;
}

export interface SupervisorLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface SupervisorOptions {
  /** Base URL of the server once it runs, for the health check. */
  url: string;
  /** HTTP basic auth for the health check (OPENCODE_SERVER_PASSWORD). */
  password?: string;
  /** Writes the files the server needs and says how to start it. A UserError here is final (no retry). */
  prepare(): Promise<SpawnPlan>;
  logFile: string;
  log: SupervisorLog;
  onChange?(status: AgentServerStatus): void;
  /** Time allowed from spawn to the first healthy answer. */
  startTimeoutMs?: number;
  backoff?: { initialMs: number; maxMs: number };
  /** A server up this long before it exits counts as healthy again: the backoff starts over. */
  stableAfterMs?: number;
  healthIntervalMs?: number;
  /** Consecutive failed health checks after which a hung server is killed and restarted. */
  healthFailures?: number;
  stopTimeoutMs?: number;
  /** The log file is rotated (one previous file kept) beyond this size. */
  logRotateBytes?: number;
}

const LOG_ROTATE_BYTES = 10 * 1024 * 1024;
const RING_LINES = 2000;

export class AgentServerSupervisor {
  private status: AgentServerStatus;
  private child: ChildProcess | undefined;
  private desired: 'running' | 'stopped' = 'stopped';
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private healthTimer: NodeJS.Timeout | undefined;
  private logStream: WriteStream | undefined;
  private logBytes = 0;
  private readonly ring: string[] = [];
  private exited: Promise<void> | undefined;
  private cycle: Promise<void> = Promise.resolve();

  constructor(private readonly options: SupervisorOptions) {
    this.status = { state: 'stopped', pid: null, url: options.url, startedAt: null, restarts: 0, lastExit: null, lastError: null, retryAt: null };
  }

  current(): AgentServerStatus {
    return { ...this.status };
  }

  /** The last lines the server wrote (stdout and stderr), oldest first. */
  recentLog(lines = 200): string[] {
    return this.ring.slice(-lines);
  }

  /** Starts the server (no-op when it runs or is starting). Resolves when it answers or the attempt failed. */
  async start(): Promise<AgentServerStatus> {
    this.desired = 'running';
    if (this.child || this.status.state === 'backoff' || this.status.state === 'starting') return this.current();
    this.failures = 0;
    this.cycle = this.launch();
    await this.cycle;
    return this.current();
  }

  /** Stops the server and any restart that is pending. */
  async stop(): Promise<AgentServerStatus> {
    this.desired = 'stopped';
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await this.cycle.catch(() => undefined);
    await this.kill();
    this.update({ state: 'stopped', pid: null, startedAt: null, retryAt: null });
    await new Promise<void>((resolve) => {
      if (!this.logStream) return resolve();
      this.logStream.end(() => resolve());
      this.logStream = undefined;
    });
    return this.current();
  }

  async restart(): Promise<AgentServerStatus> {
    await this.stop();
    return this.start();
  }

  private update(patch: Partial<AgentServerStatus>): void {
    this.status = { ...this.status, ...patch };
    try {
      this.options.onChange?.(this.current());
    } catch (error) {
      this.options.log.warn({ err: error }, 'agent server status listener failed');
    }
  }

  private async openLog(): Promise<void> {
    if (this.logStream) return;
    await mkdir(path.dirname(this.options.logFile), { recursive: true, mode: 0o700 });
    const size = await stat(this.options.logFile).then(
      (s) => s.size,
      () => 0,
    );
    const limit = this.options.logRotateBytes ?? LOG_ROTATE_BYTES;
    if (size > limit) await rename(this.options.logFile, `${this.options.logFile}.1`).catch(() => undefined);
    this.openStream(size > limit ? 0 : size);
  }

  private openStream(size: number): void {
    this.logBytes = size;
    const stream = createWriteStream(this.options.logFile, { flags: 'a', mode: 0o600 });
    stream.on('error', (error) => this.options.log.warn({ err: error }, 'agent server log file failed'));
    this.logStream = stream;
  }

  private record(line: string): void {
    this.ring.push(line);
    if (this.ring.length > RING_LINES) this.ring.splice(0, this.ring.length - RING_LINES);
    if (!this.logStream) return;
    this.logStream.write(`${line}\n`);
    this.logBytes += Buffer.byteLength(line) + 1;
    // One previous file is kept: a long-running server must not fill the disk with its output.
    if (this.logBytes > (this.options.logRotateBytes ?? LOG_ROTATE_BYTES)) {
      const full = this.logStream;
      full.end(() => {
        try {
          renameSync(this.options.logFile, `${this.options.logFile}.1`);
        } catch (error) {
          this.options.log.warn({ err: error }, 'agent server log rotation failed');
        }
      });
      this.logStream = undefined;
      full.once('finish', () => {
        if (!this.logStream && this.desired === 'running') this.openStream(0);
      });
    }
  }

  private note(message: string): void {
    this.record(`[docdex ${new Date().toISOString()}] ${message}`);
  }

  private async launch(): Promise<void> {
    if (this.desired !== 'running') return;
    this.update({ state: 'starting', retryAt: null });
    const plan = await this.prepareLaunch();
    if (plan === undefined) return;
    this.note(`starting ${plan.command} ${plan.args.join(' ')}`);
    let child: ChildProcess;
    try {
      // Its own process group, so a stop also ends the shells and language servers it started.
      child = spawn(plan.command, plan.args, { cwd: plan.cwd, env: plan.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    } catch (error) {
      this.update({ lastError: (error as Error).message });
      this.scheduleRetry();
      return;
    }
    this.child = child;
    this.recordOutput(child);
    this.exited = this.watchExit(child, Date.now());
    this.update({ pid: child.pid ?? null });
    await this.settleStart(plan, child);
  }

  /** Opens the log and asks for the spawn plan; undefined when there is nothing to start (failed or retrying). */
  private async prepareLaunch(): Promise<SpawnPlan | undefined> {
    try {
      await this.openLog();
      return await this.options.prepare();
    } catch (error) {
      if (isUserError(error)) {
        // A configuration problem: retrying cannot fix it.
        this.desired = 'stopped';
        this.note(`not started: ${(error as Error).message}`);
        this.update({ state: 'failed', lastError: (error as Error).message });
        return undefined;
      }
      this.note(`preparing the start failed: ${(error as Error).message}`);
      this.update({ lastError: (error as Error).message });
      this.scheduleRetry();
      return undefined;
    }
  }

  /** The child's stdout and stderr, line by line, into the log. */
  private recordOutput(child: ChildProcess): void {
    for (const stream of [child.stdout, child.stderr]) {
      let pending = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        pending += chunk;
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) this.record(line);
      });
      stream?.on('end', () => {
        if (pending !== '') this.record(pending);
      });
    }
  }

  /** Resolves when the child has closed; an exit nobody asked for schedules a restart. */
  private watchExit(child: ChildProcess, spawnedAt: number): Promise<void> {
    let spawnError: Error | undefined;
    return new Promise<void>((resolve) => {
      child.once('error', (error) => {
        spawnError = error;
      });
      child.once('close', (code, signal) => {
        const exit = signal ? `signal ${signal}` : `exit code ${code}`;
        this.note(`agent server exited (${exit})`);
        if (this.child === child) this.child = undefined;
        this.stopHealth();
        const expected = this.desired !== 'running' || this.status.state === 'stopping';
        this.update({ pid: null, lastExit: exit, ...(spawnError ? { lastError: spawnError.message } : {}) });
        if (!expected) {
          if (Date.now() - spawnedAt > (this.options.stableAfterMs ?? 60_000)) this.failures = 0;
          this.options.log.warn({ exit }, 'agent server exited; restarting');
          this.update({ restarts: this.status.restarts + 1, startedAt: null });
          this.scheduleRetry();
        }
        resolve();
      });
    });
  }

  /** Waits for the first health answer (and the start check), then marks it running, or kills it. */
  private async settleStart(plan: SpawnPlan, child: ChildProcess): Promise<void> {
    const healthy = await this.waitHealthy(child, this.options.startTimeoutMs ?? 60_000);
    if (this.child !== child) return; // exited meanwhile: the close handler scheduled the retry
    if (!healthy) {
      if (this.desired !== 'running') {
        await this.kill('SIGTERM', child);
        return;
      }
      this.note('agent server did not answer in time; killing it');
      this.update({ lastError: 'The agent server did not answer its health check in time.' });
      await this.kill('SIGKILL', child);
      return;
    }
    if (plan.verify && !(await this.verifyStart(plan, child))) return;
    this.update({ state: 'running', startedAt: Date.now(), lastError: null });
    this.options.log.info({ pid: child.pid, url: this.options.url }, 'agent server running');
    this.startHealth(child);
  }

  /** The plan's start check; false when the child was stopped (for good, or for a retry) instead. */
  private async verifyStart(plan: SpawnPlan, child: ChildProcess): Promise<boolean> {
    let failure: unknown;
    try {
      await plan.verify!({ url: this.options.url, headers: this.authHeaders(), pid: child.pid });
    } catch (error) {
      failure = error ?? new Error('the start check failed');
    }
    if (this.child !== child) return false; // exited meanwhile: the close handler scheduled the retry
    if (this.desired !== 'running') {
      await this.kill('SIGTERM', child);
      return false;
    }
    if (failure === undefined) return true;
    const message = (failure as Error).message ?? String(failure);
    this.note(`start check failed; stopping the agent server: ${message}`);
    this.options.log.error({ err: failure }, 'agent server start check failed');
    if (isUserError(failure)) {
      // Retrying cannot fix it, and the server must not keep running as it is.
      this.desired = 'stopped';
      await this.kill('SIGKILL', child);
      this.update({ state: 'failed', pid: null, startedAt: null, lastError: message });
      return false;
    }
    this.update({ lastError: message });
    await this.kill('SIGKILL', child);
    return false;
  }

  private scheduleRetry(): void {
    if (this.desired !== 'running') {
      this.update({ state: 'stopped', retryAt: null });
      return;
    }
    const { initialMs, maxMs } = this.options.backoff ?? { initialMs: 1000, maxMs: 60_000 };
    const delay = Math.min(maxMs, initialMs * 2 ** this.failures);
    this.failures++;
    this.update({ state: 'backoff', retryAt: Date.now() + delay });
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.cycle = this.launch().catch((error: unknown) => {
        this.options.log.error({ err: error }, 'agent server restart failed');
      });
    }, delay);
    this.retryTimer.unref();
  }

  private authHeaders(): Record<string, string> {
    return this.options.password ? { authorization: `Basic ${Buffer.from(`opencode:${this.options.password}`).toString('base64')}` } : {};
  }

  async probe(timeoutMs = 3000): Promise<boolean> {
    try {
      const response = await fetch(`${this.options.url}/global/health`, { headers: this.authHeaders(), signal: AbortSignal.timeout(timeoutMs) });
      await response.body?.cancel();
      return response.ok;
    } catch {
      return false;
    }
  }

  private async waitHealthy(child: ChildProcess, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.desired !== 'running' || this.child !== child || child.exitCode !== null || child.signalCode !== null) return false;
      if (await this.probe(2000)) return true;
      await new Promise((r) => setTimeout(r, 200));
    }
    return false;
  }

  private startHealth(child: ChildProcess): void {
    this.stopHealth();
    let failed = 0;
    const limit = this.options.healthFailures ?? 3;
    this.healthTimer = setInterval(() => {
      void this.probe(5000).then(async (ok) => {
        if (this.child !== child) return;
        failed = ok ? 0 : failed + 1;
        if (failed >= limit) {
          this.note(`agent server failed ${failed} health checks; restarting it`);
          this.update({ lastError: `The agent server stopped answering (${failed} failed health checks).` });
          await this.kill('SIGKILL', child);
        }
      });
    }, this.options.healthIntervalMs ?? 10_000);
    this.healthTimer.unref();
  }

  private stopHealth(): void {
    clearInterval(this.healthTimer);
    this.healthTimer = undefined;
  }

  private signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      try {
        child.kill(signal);
      } catch {
        // already gone
      }
    }
  }

  /** Ends the child (TERM, then KILL after the stop timeout) and waits for it. */
  private async kill(first: NodeJS.Signals = 'SIGTERM', target = this.child): Promise<void> {
    if (!target) return;
    if (target === this.child && this.desired !== 'running') this.update({ state: 'stopping' });
    const exited = this.exited ?? Promise.resolve();
    this.signalGroup(target, first);
    if (first !== 'SIGKILL') {
      const timer = setTimeout(() => this.signalGroup(target, 'SIGKILL'), this.options.stopTimeoutMs ?? 10_000);
      await exited;
      clearTimeout(timer);
    } else {
      await exited;
    }
    // Whatever the group left behind (a shell that ignored TERM) goes too.
    this.signalGroup(target, 'SIGKILL');
  }
}
