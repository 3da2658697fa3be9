/**
 * `agent daemon --node NAME`: the node daemon's command. Reads the environment once (NODE_NAME,
 * KUBECONFIG, FLOTILLA_LOG_LEVEL), then runs until SIGTERM/SIGINT; exit code 2 for bad flags,
 * 1 when the daemon cannot start or fails.
 */
import { Command } from 'commander';
import { prepareCommand, runCommand } from '../command.js';
import { addSettingOptions } from '../settings/options.js';
import type { Flags } from '../settings/reader.js';
import { DAEMON_SETTINGS, loadDaemonConfig } from './config.js';

/** Grace on top of in-flight work before a stuck shutdown is cut short. */
const HARD_EXIT_MS = 40_000;

export function daemonCommand(): Command {
  return addSettingOptions(new Command('daemon'), [{ title: 'Daemon', settings: DAEMON_SETTINGS }])
    .description("run the node daemon: pull the images of this node's NodeImage through the CRI")
    .action((flags: Flags) => runDaemon(flags));
}

async function runDaemon(flags: Flags): Promise<void> {
  const base = await prepareCommand('daemon', () => loadDaemonConfig(flags, process.env), process.env);
  if (!base) return;
  let daemon;
  try {
    // Loaded here, so the manager process never loads the daemon's CRI client (gRPC, protobuf).
    const { createDaemon } = await import('./run.js');
    daemon = createDaemon(base);
  } catch (err) {
    base.logger.error({ err }, 'agent daemon cannot start');
    process.exitCode = 1;
    return;
  }
  base.logger.info({ node: base.config.nodeName }, 'agent daemon starting');
  await runCommand('daemon', base.logger, daemon, HARD_EXIT_MS);
  // Everything is stopped and flushed (pino writes stdout synchronously); the runtime's shutdown
  // deadline timers would otherwise keep the process alive until they fire (30 s).
  process.exit();
}
