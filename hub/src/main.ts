/**
 * Hub entry point: validate the environment, start, and shut down gracefully on SIGTERM/SIGINT
 * (in-flight requests finish, the relay and status consumer stop, connections drain).
 */
import { loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { startHub } from './server.js';

const SHUTDOWN_GRACE_MS = 15_000;

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger(config.logLevel);
  const hub = await startHub({ config, logger });
  logger.info({ url: hub.url }, 'hub started');
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    hub.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
