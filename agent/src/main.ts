#!/usr/bin/env node
/**
 * Entry point of the agent: `agent manager [...]` and `agent daemon --node NAME [...]`. Reads
 * argv and process.env (the daemon's in daemon/cli.ts) and hands them to the configuration
 * loaders; command.ts does what both commands do around their work (exit codes, signals).
 */
import { buildCli } from './cli.js';
import { prepareCommand, runCommand } from './command.js';
import { loadConfig } from './config.js';
import { daemonCommand } from './daemon/cli.js';
import type { Flags } from './settings/reader.js';

/** Time on top of the shutdown timeout before a stuck shutdown is cut short. */
const HARD_EXIT_GRACE_MS = 10_000;

async function runManager(flags: Flags): Promise<void> {
  const base = await prepareCommand('manager', () => loadConfig(flags, process.env), process.env);
  if (!base) return;
  const { config, logger } = base;
  // Loaded here, so the daemon's process never loads the controllers, the webhook or the hub link.
  const [{ createAgentManager }, { components }] = await Promise.all([import('./app.js'), import('./components.js')]);
  const manager = await createAgentManager({ ...base, components });
  logger.info(
    {
      cluster: config.clusterName,
      identity: config.identity,
      leaderElection: config.leaderElection.enabled,
      hub: config.hub?.url ?? 'none (standalone)',
    },
    'agent manager starting',
  );
  await runCommand('manager', logger, manager, config.shutdownTimeoutMs + HARD_EXIT_GRACE_MS);
}

await buildCli({ manager: runManager }).addCommand(daemonCommand()).parseAsync(process.argv);
