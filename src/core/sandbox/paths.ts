import path from 'node:path';
import { SandboxUnavailableError } from './unavailable.js';

/** Unix socket paths are limited to 108 bytes (sun_path); leave room for the terminator. */
const MAX_SOCKET_PATH = 100;

/** Files of the runner in its state directory (kept apart from runner-daemon.ts so clients load nothing heavy). */
export interface RunnerPaths {
  stateDir: string;
  socket: string;
  lock: string;
  log: string;
  scratch: string;
  console: string;
}

export function runnerPaths(stateDir: string): RunnerPaths {
  const socket = path.join(stateDir, 'runner.sock');
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    throw new SandboxUnavailableError(`the runner socket path ${socket} is longer than ${MAX_SOCKET_PATH} bytes`, {
      hint: 'Use a shorter DOCDEX_HOME.',
    });
  }
  return {
    stateDir,
    socket,
    lock: path.join(stateDir, 'runner.lock'),
    log: path.join(stateDir, 'runner.log'),
    scratch: path.join(stateDir, 'scratch.img'),
    console: path.join(stateDir, 'console.log'),
  };
}
