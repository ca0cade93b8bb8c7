import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Writable } from 'node:stream';
import { FrameDecoder, FrameType, decodeExit, encodeFrame, encodeRequest, encodeSignal, exitCodeOf } from './protocol.js';
import type { ExecEnd, ExecRequest } from './protocol.js';
import { runnerPaths } from './paths.js';
import type { RunnerReply, RunnerRequest, VmStatus } from './runner-daemon.js';
import { SandboxUnavailableError, UNAVAILABLE_EXIT_CODE, unavailableMessage } from './unavailable.js';

/** How long a client waits for a runner it just spawned (or one that is starting) to listen. */
const RUNNER_START_WAIT_MS = 15_000;

/** The daemon entry next to this module; from src/ (tests) it does not exist and tests start the daemon in-process. */
export const RUNNER_MAIN = fileURLToPath(new URL('./runner-main.js', import.meta.url));

export function spawnRunnerDaemon(stateDir: string, log: number | 'ignore' = 'ignore'): void {
  if (!existsSync(RUNNER_MAIN)) throw new SandboxUnavailableError(`the runner entry ${RUNNER_MAIN} is missing (run npm run build)`);
  const child = spawn(process.execPath, [RUNNER_MAIN, '--state-dir', stateDir], {
    detached: true,
    stdio: ['ignore', log, log],
    // The runner's environment never reaches the guest, but there is no reason for it to hold the manager's token.
    env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'MGR_INTERNAL_TOKEN')),
  });
  child.unref();
}

function tryConnect(socketPath: string): Promise<net.Socket | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    socket.once('connect', () => {
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', () => resolve(undefined));
  });
}

/** Connects to the runner of `stateDir`, starting one (detached) when none answers and `autostart` is set. */
export async function connectRunner(stateDir: string, options: { autostart: boolean; waitMs?: number }): Promise<net.Socket | undefined> {
  const paths = runnerPaths(stateDir);
  const first = await tryConnect(paths.socket);
  if (first || !options.autostart) return first;
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const logFile = await open(paths.log, 'a', 0o600);
  try {
    spawnRunnerDaemon(stateDir, logFile.fd);
  } finally {
    await logFile.close();
  }
  const deadline = Date.now() + (options.waitMs ?? RUNNER_START_WAIT_MS);
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    const socket = await tryConnect(paths.socket);
    if (socket) return socket;
  }
  throw new SandboxUnavailableError(`the sandbox runner did not start within ${options.waitMs ?? RUNNER_START_WAIT_MS} ms (see ${paths.log})`);
}

function readReply(socket: net.Socket): Promise<RunnerReply> {
  return new Promise((resolve, reject) => {
    const decoder = new FrameDecoder();
    let done = false;
    socket.on('data', (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) {
        if (frame.type === FrameType.result && !done) {
          done = true;
          resolve(JSON.parse(frame.payload.toString('utf8')) as RunnerReply);
        }
      }
    });
    socket.on('close', () => {
      if (!done) reject(new SandboxUnavailableError('the sandbox runner closed the connection without an answer'));
    });
    socket.on('error', () => undefined);
  });
}

function unwrap(reply: RunnerReply): unknown {
  if (reply.ok) return reply.result;
  throw new SandboxUnavailableError(reply.error.message.replace(/^Sandbox enforcement is on but the sandbox is unavailable: /, ''), reply.error.hint ? { hint: reply.error.hint } : {});
}

/** up / down / status. `status` and `down` never start a runner. */
export async function runnerCall(stateDir: string, request: RunnerRequest): Promise<unknown> {
  const socket = await connectRunner(stateDir, { autostart: request.op === 'up' || request.op === 'exec' });
  if (!socket) {
    if (request.op === 'down') return { stopped: false };
    return { name: 'mgr-workspace', state: 'stopped', runnerPid: 0 } satisfies VmStatus;
  }
  const reply = readReply(socket);
  socket.write(encodeFrame(FrameType.request, 0, encodeRequest(request)));
  try {
    return unwrap(await reply);
  } finally {
    socket.destroy();
  }
}

export interface ExecOutcome {
  exitCode: number;
  /** How the guest command ended; absent when it never ran (then `unavailable` says why). */
  end?: ExecEnd;
  unavailable?: string;
  hint?: string;
}

export interface ExecHandle {
  /** Forwards a signal to the command's process group in the guest. */
  signal(signal: number): void;
  done: Promise<ExecOutcome>;
}

/**
 * Runs one command through the runner, streaming stdout and stderr to the given writers as they arrive.
 * Never throws for sandbox failures: the outcome says the command did not run, with the fail-closed message,
 * and exit code 125.
 */
export function runnerExec(stateDir: string, request: RunnerRequest & { op: 'exec' }, exec: ExecRequest, io: { stdout: Writable; stderr: Writable }): ExecHandle {
  let socket: net.Socket | undefined;
  const queued: number[] = [];
  const done = (async (): Promise<ExecOutcome> => {
    try {
      socket = await connectRunner(stateDir, { autostart: true });
    } catch (error) {
      return { exitCode: UNAVAILABLE_EXIT_CODE, unavailable: (error as Error).message };
    }
    if (!socket) return { exitCode: UNAVAILABLE_EXIT_CODE, unavailable: unavailableMessage('no sandbox runner is reachable') };
    const s = socket;
    for (const signal of queued.splice(0)) s.write(encodeFrame(FrameType.clientSignal, 0, encodeSignal(signal)));
    return new Promise<ExecOutcome>((resolve) => {
      const decoder = new FrameDecoder();
      let outcome: ExecOutcome | undefined;
      s.on('data', (chunk: Buffer) => {
        for (const frame of decoder.push(chunk)) {
          if (frame.type === FrameType.stdout || frame.type === FrameType.stderr) {
            const target = frame.type === FrameType.stdout ? io.stdout : io.stderr;
            if (!target.write(frame.payload)) {
              // Let a slow reader slow the guest down instead of buffering its output here.
              s.pause();
              target.once('drain', () => s.resume());
            }
          } else if (frame.type === FrameType.exit) {
            const end = decodeExit(frame.payload);
            outcome = { exitCode: exitCodeOf(end), end };
          } else if (frame.type === FrameType.result) {
            const reply = JSON.parse(frame.payload.toString('utf8')) as RunnerReply;
            outcome = reply.ok
              ? { exitCode: UNAVAILABLE_EXIT_CODE, unavailable: unavailableMessage('the sandbox runner answered an exec without an exit status') }
              : { exitCode: UNAVAILABLE_EXIT_CODE, unavailable: reply.error.message, ...(reply.error.hint ? { hint: reply.error.hint } : {}) };
          }
        }
      });
      s.on('error', () => undefined);
      s.on('close', () => {
        resolve(outcome ?? { exitCode: UNAVAILABLE_EXIT_CODE, unavailable: unavailableMessage('the sandbox runner went away before the command finished') });
      });
      s.write(encodeFrame(FrameType.request, 0, encodeRequest(request, exec)));
    });
  })();
  return {
    done,
    signal(signal: number) {
      if (socket && !socket.destroyed) socket.write(encodeFrame(FrameType.clientSignal, 0, encodeSignal(signal)));
      else queued.push(signal);
    },
  };
}
