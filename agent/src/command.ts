/**
 * What both `agent` commands (manager, daemon) do around their own work: read the configuration
 * once, a bad one being exit code 2 with its problems on stderr; make the root logger, the
 * apiserver credentials and a metrics registry with the process metrics; then run until
 * SIGTERM/SIGINT, a failure being exit code 1 and a stuck shutdown cut short after a deadline.
 */
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createRootLogger, type LogLevel } from './logger.js';
import { type KubeCredentials, loadKubeCredentials } from './runtime/kubeconfig/index.js';
import { EVENT_LOOP_MONITOR_MS } from './runtime/event-loop.js';

/** What a command's configuration says about the process. */
export interface ProcessConfig {
  logLevel: LogLevel;
  /** Undefined: in-cluster credentials. */
  kubeconfig: string | undefined;
}

/** What a command works with. */
export interface CommandBase<Config> {
  config: Config;
  logger: Logger;
  kubeConfig: KubeCredentials;
  registry: Registry;
}

/**
 * Reads the configuration with `load` and the apiserver credentials it names (`env`: the
 * process environment, for in-cluster credentials); undefined (exit code 2, problems on stderr)
 * when either is bad.
 */
export async function prepareCommand<Config extends ProcessConfig>(
  name: string,
  load: () => Config,
  env: Readonly<Record<string, string | undefined>>,
): Promise<CommandBase<Config> | undefined> {
  let config: Config;
  let loaded: Awaited<ReturnType<typeof loadKubeCredentials>>;
  try {
    config = load();
    loaded = await loadKubeCredentials(config.kubeconfig, env);
  } catch (err) {
    process.stderr.write(`agent ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
    return undefined;
  }
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_MONITOR_MS });
  const logger = createRootLogger(config.logLevel);
  if (loaded.delegatedBecause) {
    logger.info({ field: loaded.delegatedBecause }, 'kubeconfig needs @kubernetes/client-node for its credentials');
  }
  return { config, logger, kubeConfig: loaded.credentials, registry };
}

/** What a command runs: start() resolves once stop() has finished a clean shutdown. */
export interface CommandRun {
  start(): Promise<void>;
  stop(reason: string): Promise<void>;
}

/**
 * Runs `run` until it stops; SIGTERM or SIGINT stops it, and exits 1 if stopping takes longer than
 * `hardExitMs`. A failure is logged and sets exit code 1.
 */
export async function runCommand(name: string, logger: Logger, run: CommandRun, hardExitMs: number): Promise<void> {
  const onSignal = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, hardExitMs).unref();
    void run.stop(signal);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    await run.start();
    logger.info(`agent ${name} stopped`);
  } catch (err) {
    logger.error({ err }, `agent ${name} failed`);
    process.exitCode = 1;
  }
}
