/**
 * What each cluster of a rollout waits for ("why is it stuck"), read from the plan and the state
 * the scheduler committed: one reason per cluster (api's WAIT_REASONS), and when the reason has
 * a known end (a maintenance window's next opening) that time. Clusters that are done, and every
 * cluster of a finished rollout, wait for nothing. Pure.
 */
import type { WaitReason } from '@flotilla/api';
import { isTerminalPhase, type FrozenPlan, type RolloutState } from './types.js';

export interface ClusterWait {
  reason: WaitReason;
  /** When the wait ends at the latest, if known (epoch ms). */
  until?: number;
}

const DONE = new Set(['Succeeded', 'Failed', 'Skipped', 'RolledBack']);

/** The wait of a Pending cluster in a running rollout. */
function pendingWait(state: RolloutState, name: string): ClusterWait {
  const cs = state.clusters[name]!;
  if (cs.wave > state.currentWave) return { reason: 'previousWave' };
  if (cs.blocked) return { reason: cs.blocked.reason, ...(cs.blocked.until ? { until: cs.blocked.until } : {}) };
  // Its wave runs (or is about to start) and this cluster's turn has not come.
  return { reason: 'concurrency' };
}

/** What one member cluster waits for now; undefined when it waits for nothing. */
export function waitOf(state: RolloutState, name: string): ClusterWait | undefined {
  const cs = state.clusters[name];
  if (!cs || isTerminalPhase(state.phase) || DONE.has(cs.phase)) return undefined;
  // A gate of the whole rollout holds every cluster that has not finished.
  if (state.phase === 'Paused') return { reason: 'paused' };
  if (state.phase === 'WaitingApproval') return { reason: 'approval' };
  if (cs.phase === 'Soaking') return { reason: cs.analysis && cs.analysis.verdict !== 'Passed' ? 'analysis' : 'soak' };
  if (cs.phase === 'Updating') return { reason: cs.healthySince === undefined ? 'health' : 'canaryPause' };
  return pendingWait(state, name);
}

/** How many clusters of the rollout wait for each reason (reasons with none are absent). */
export function countWaits(plan: FrozenPlan, state: RolloutState): Partial<Record<WaitReason, number>> {
  const out: Partial<Record<WaitReason, number>> = {};
  for (const name of plan.waves.flatMap((w) => w.members)) {
    const wait = waitOf(state, name);
    if (wait) out[wait.reason] = (out[wait.reason] ?? 0) + 1;
  }
  return out;
}
