/** The rollout strategy of `rollouts start`: built from `--canary ...` flags, or read from a file; pure. */
import type { RolloutStrategy, Wave } from '@flotilla/api';
import { APPROVAL_GATES } from '@flotilla/api/enums';
import YAML from 'yaml';
import { CliError, unparsableFile, usageError } from './errors.js';

export interface CanaryFlags {
  /** `cluster-a,cluster-b` (names) or `ring=canary,region=eu` (labels). */
  canary: string;
  soakSeconds?: number | undefined;
  maxConcurrency?: number | undefined;
  approval?: string | undefined;
  progressDeadlineSeconds?: number | undefined;
}

function canaryClusters(spec: string): NonNullable<Wave['clusters']> {
  const parts = spec
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (parts.length === 0) throw usageError('--canary needs cluster names or labels (k=v)');
  if (parts.every((p) => p.includes('='))) {
    const matchLabels: Record<string, string> = {};
    for (const p of parts) matchLabels[p.slice(0, p.indexOf('='))] = p.slice(p.indexOf('=') + 1);
    return { selector: { matchLabels } };
  }
  if (parts.some((p) => p.includes('=')))
    throw usageError('--canary takes either cluster names or k=v labels, not both');
  return { names: parts };
}

/**
 * Two waves: `canary` (the named or labelled clusters, one at a time, no failure budget) and
 * `main` (every other targeted cluster). Soak and deadline apply to both; concurrency and the
 * approval gate to `main`.
 */
export function canaryStrategy(f: CanaryFlags): RolloutStrategy {
  if (f.approval !== undefined && !(APPROVAL_GATES as readonly string[]).includes(f.approval)) {
    throw usageError(`--approval must be one of ${APPROVAL_GATES.join(', ')} (got "${f.approval}")`);
  }
  if (f.maxConcurrency === 0) throw usageError('--max-concurrency must be at least 1');
  const timing = {
    ...(f.soakSeconds !== undefined ? { soakSeconds: f.soakSeconds } : {}),
    ...(f.progressDeadlineSeconds !== undefined ? { progressDeadlineSeconds: f.progressDeadlineSeconds } : {}),
  };
  return {
    waves: [
      { name: 'canary', clusters: canaryClusters(f.canary), maxConcurrency: 1, ...timing },
      {
        name: 'main',
        ...timing,
        ...(f.maxConcurrency !== undefined ? { maxConcurrency: f.maxConcurrency } : {}),
        ...(f.approval !== undefined ? { approval: f.approval as Wave['approval'] } : {}),
      },
    ],
  };
}

/**
 * The strategy in a `--strategy` file (YAML or JSON). Only its shape is checked here; the hub
 * validates the rest and names every field it refuses.
 */
export function parseStrategyFile(text: string, file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = YAML.parse(text);
  } catch (cause) {
    throw unparsableFile(file, cause);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError('CLI_ERR_FILE', `${file}: the strategy must be an object ({ waves: [...] })`);
  }
  return value as Record<string, unknown>;
}
