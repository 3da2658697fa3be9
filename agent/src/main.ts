#!/usr/bin/env node
/**
 * Entry point of the agent: `agent manager --kubeconfig PATH [...]`. The only place (with
 * config.ts) that touches process.env, argv, signals and the exit code.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createAgentManager } from './app.js';
import { buildCli } from './cli.js';
import { components } from './components.js';
import { loadConfig } from './config.js';
import { daemonCommand } from './daemon/cli.js';
import { createRootLogger } from './logger.js';
import type { Flags } from './settings/reader.js';

/** Time on top of the shutdown timeout before a stuck shutdown is cut short. */
const HARD_EXIT_GRACE_MS = 10_000;

async function runManager(flags: Flags): Promise<void> {
  let config;
  try {
    config = loadConfig(flags, process.env);
  } catch (err) {
    process.stderr.write(`agent manager: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
    return;
  }
  const logger = createRootLogger(config.logLevel);
  const kubeConfig = new KubeConfig();
  if (config.kubeconfig) kubeConfig.loadFromFile(config.kubeconfig);
  else kubeConfig.loadFromCluster();
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const manager = await createAgentManager({ config, kubeConfig, logger, registry, components });

  const shutdownTimeoutMs = config.shutdownTimeoutMs;
  const onSignal = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, shutdownTimeoutMs + HARD_EXIT_GRACE_MS).unref();
    void manager.stop(signal);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);

  logger.info(
    {
      cluster: config.clusterName,
      identity: config.identity,
      leaderElection: config.leaderElection.enabled,
      hub: config.hub?.url ?? 'none (standalone)',
    },
    'agent manager starting',
  );
  try {
    await manager.start();
    logger.info('agent manager stopped');
  } catch (err) {
    logger.error({ err }, 'agent manager failed');
    process.exitCode = 1;
  }
}

await buildCli({ manager: runManager }).addCommand(daemonCommand()).parseAsync(process.argv);
