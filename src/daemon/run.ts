import type { Config } from '../core/config.js';
import { createLogger } from './logger.js';
import { mcpRoutes } from './mcp/routes.js';
import { agentServerRoutes } from './routes/agent-server.js';
import { agentRoutes } from './routes/agent.js';
import { docsIndexRoutes } from './routes/index.js';
import { startDaemon } from './server.js';
import type { ServiceStarter } from './server.js';

/**
 * `docdex serve`: starts the daemon and resolves once SIGINT/SIGTERM has shut it down gracefully. A second
 * signal while shutting down exits at once.
 */
export async function runDaemonUntilSignal(config: Config, options: { services: ServiceStarter[]; host?: string; port?: number }): Promise<void> {
  const logger = createLogger();
  // The signal handlers come first: HTTP answers (and a supervisor may signal) before the services have started,
  // and a signal then must still shut down what has started, not end the process where it stands.
  let signalled: (signal: NodeJS.Signals) => void = () => undefined;
  const stopAsked = new Promise<NodeJS.Signals>((resolve) => (signalled = resolve));
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.kill(process.pid, 'SIGKILL');
      return;
    }
    stopping = true;
    signalled(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const daemon = await startDaemon(config, {
      routes: [...docsIndexRoutes, ...mcpRoutes, ...agentRoutes, ...agentServerRoutes],
      logger,
      services: options.services,
      ...(options.host === undefined ? {} : { host: options.host }),
      ...(options.port === undefined ? {} : { port: options.port }),
    });
    if (!stopping) logger.info({ url: daemon.url, docs: `${daemon.url}/docs` }, 'docdex daemon listening');
    const signal = await stopAsked;
    logger.info({ signal }, 'shutting down: finishing in-flight requests and pages');
    await daemon.close().catch((error: unknown) => logger.error({ err: error }, 'shutdown error'));
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  logger.info('docdex daemon stopped');
}
