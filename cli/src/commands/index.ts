/** The command table: every `GROUP VERB` the CLI knows, in the order help lists them. */
import type { Command } from '../context.js';
import { clusterCommands } from './clusters.js';
import { rolloutCommands } from './rollouts.js';
import { tokenCommands } from './tokens.js';
import { workloadCommands } from './workloads.js';

export const COMMANDS: readonly Command[] = [
  ...clusterCommands,
  ...workloadCommands,
  ...rolloutCommands,
  ...tokenCommands,
];
