import { Command } from 'commander';
import { MANAGER_SETTINGS_GROUPS } from './config.js';
import type { Flags } from './settings/reader.js';
import { addSettingOptions } from './settings/options.js';

/** What the commands do; injected so the parsing is testable without starting anything. */
export interface CliActions {
  manager(flags: Flags): Promise<void>;
}

/**
 * The `agent` command line. The flags and their --help come from the settings tables
 * (config.ts); they are handed over as given, and loadConfig applies the environment, the
 * defaults and validation, so every entry point validates the same way.
 */
export function buildCli(actions: CliActions): Command {
  const program = new Command('agent').description('Flotilla cluster agent').showHelpAfterError();
  addSettingOptions(program.command('manager'), MANAGER_SETTINGS_GROUPS)
    .description(
      'run the components (controllers, webhook, hub link), with leader election, health and metrics endpoints',
    )
    .action((flags: Flags) => actions.manager(flags));
  return program;
}
