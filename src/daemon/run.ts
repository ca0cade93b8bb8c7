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
  const daemon = await startDaemon(config, {
    routes: [...docsIndexRoutes, ...mcpRoutes, ...agentRoutes, ...agentServerRoutes],
    logger,
    services: options.services,
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: options.port }),
  });
  logger.info({ url: daemon.url, docs: `${daemon.url}/docs` }, 'docdex daemon listening');
  await new Promise<void>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        logger.warn({ signal }, 'second signal: exiting now');
        process.kill(process.pid, 'SIGKILL');
        return;
      }
      stopping = true;
      logger.info({ signal }, 'shutting down: finishing in-flight requests and pages');
      daemon.close().then(resolve, (error: unknown) => {
        logger.error({ err: error }, 'shutdown error');
        resolve();
      });
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
  logger.info('docdex daemon stopped');
}
