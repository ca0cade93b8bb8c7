import pino from 'pino';
import { startDaemon } from '../../src/daemon/server.js';
import type { DaemonHandle, DaemonOptions } from '../../src/daemon/server.js';
import type { Config } from '../../src/core/config.js';

/** The real daemon on an ephemeral loopback port, with a silent logger. */
export async function startTestDaemon(config: Config, options: Partial<DaemonOptions> & Pick<DaemonOptions, 'routes'>): Promise<DaemonHandle & { base: string }> {
  const handle = await startDaemon(config, { host: '127.0.0.1', port: 0, logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }), ...options });
  return { ...handle, base: handle.url.replace('[::1]', '127.0.0.1') };
}
