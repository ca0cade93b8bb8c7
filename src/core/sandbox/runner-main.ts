/**
 * Process entry of the sandbox runner daemon, started detached by runner-client.ts:
 *   node dist/core/sandbox/runner-main.js --state-dir DIR
 * Its stdout/stderr are the runner log file. It exits when the daemon closes (down, idle, SIGTERM).
 */
import { RunnerDaemon } from './runner-daemon.js';

const at = process.argv.indexOf('--state-dir');
const stateDir = at > 0 ? process.argv[at + 1] : undefined;
if (!stateDir) {
  process.stderr.write('usage: runner-main.js --state-dir DIR\n');
  process.exitCode = 64;
} else {
  try {
    const daemon = await RunnerDaemon.start({ stateDir, log: (line) => process.stderr.write(`${line}\n`) });
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(signal, () => void daemon.close());
    await daemon.closed;
  } catch (error) {
    // Losing the race to another runner is normal when two shims start at once.
    process.stderr.write(`${new Date().toISOString()} runner not started: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
