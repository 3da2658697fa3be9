/**
 * `agent daemon --node NAME`: the node daemon's command. Reads the environment once (NODE_NAME,
 * KUBECONFIG, FLOTILLA_LOG_LEVEL), then runs until SIGTERM/SIGINT; exit code 2 for bad flags,
 * 1 when the daemon cannot start or fails.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { Command } from 'commander';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createRootLogger } from '../logger.js';
import { addSettingOptions } from '../settings/options.js';
import type { Flags } from '../settings/reader.js';
import { DAEMON_SETTINGS, loadDaemonConfig, type DaemonConfig } from './config.js';
import { createDaemon } from './run.js';

/** Grace on top of in-flight work before a stuck shutdown is cut short. */
const HARD_EXIT_MS = 40_000;

export function daemonCommand(): Command {
  return addSettingOptions(new Command('daemon'), [{ title: 'Daemon', settings: DAEMON_SETTINGS }])
    .description("run the node daemon: pull the images of this node's NodeImage through the CRI")
    .action((flags: Flags) => runDaemon(flags));
}

async function runDaemon(flags: Flags): Promise<void> {
  let config: DaemonConfig;
  try {
    config = loadDaemonConfig(flags, process.env);
  } catch (err) {
    process.stderr.write(`agent daemon: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
    return;
  }
  const logger = createRootLogger(config.logLevel);
  const kubeConfig = new KubeConfig();
  if (config.kubeconfig) kubeConfig.loadFromFile(config.kubeconfig);
  else kubeConfig.loadFromCluster();
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  let daemon;
  try {
    daemon = createDaemon({ config, kubeConfig, logger, registry });
  } catch (err) {
    logger.error({ err }, 'agent daemon cannot start');
    process.exitCode = 1;
    return;
  }
  const onSignal = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), HARD_EXIT_MS).unref();
    void daemon.stop(signal);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  logger.info({ node: config.nodeName }, 'agent daemon starting');
  try {
    await daemon.start();
    logger.info('agent daemon stopped');
  } catch (err) {
    logger.error({ err }, 'agent daemon failed');
    process.exitCode = 1;
  }
  // Everything is stopped and flushed (pino writes stdout synchronously); the runtime's shutdown
  // deadline timers would otherwise keep the process alive until they fire (30 s).
  process.exit();
}
