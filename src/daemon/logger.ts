import pino from 'pino';
import type { Logger } from 'pino';

/** Structured JSON logs; human-readable (pino-pretty) when stderr is a terminal. Logs go to stderr. */
export function createLogger(options: { level?: string; pretty?: boolean } = {}): Logger {
  const level = options.level ?? process.env.LOG_LEVEL ?? 'info';
  if (options.pretty ?? process.stderr.isTTY) {
    return pino({ level, transport: { target: 'pino-pretty', options: { destination: 2, colorize: !process.env.NO_COLOR, ignore: 'pid,hostname' } } });
  }
  return pino({ level }, pino.destination(2));
}
