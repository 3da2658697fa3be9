/**
 * The plan of a staged rollback: the clusters a failed rollout moved, returned in reverse wave
 * order (the last wave's first, the canary last) and, within a wave, in reverse update order,
 * with each wave's gates, soak, deadline and concurrency. It runs as a rollout of its own to the
 * failed rollout's previous revision; a failure there pauses it (a rollback is not rolled back).
 * Pure.
 */
import type { RolloutStrategy } from '@flotilla/api';
import type { FrozenPlan, FrozenWave } from './types.js';

export function stagedRollbackPlan(plan: FrozenPlan, moved: readonly string[]): FrozenPlan {
  const back = new Set(moved);
  const waves: FrozenWave[] = [];
  // No metric analysis: a rollback returns to a revision that already ran, and must not be held
  // by the metrics of the incident that caused it.
  for (const { analysis: _analysis, ...w } of [...plan.waves].reverse()) {
    const members = w.members.filter((m) => back.has(m)).reverse();
    if (members.length === 0) continue;
    waves.push({
      ...w,
      members,
      maxConcurrency: Math.max(1, Math.min(w.maxConcurrency, members.length)),
      failureBudget: Math.min(w.failureBudget, members.length),
      canarySteps: [],
    });
  }
  return {
    waves,
    failureBudget: Math.min(plan.failureBudget, moved.length),
    onFailure: 'Pause',
    offlinePolicy: plan.offlinePolicy,
    rollback: 'AllAtOnce',
  };
}

/** The plan written as a strategy (what a rollout row shows as the strategy it was given). */
export function strategyOfPlan(plan: FrozenPlan): RolloutStrategy {
  return {
    waves: plan.waves.map((w) => ({
      name: w.name,
      clusters: { names: w.members },
      maxConcurrency: w.maxConcurrency,
      failureBudget: w.failureBudget,
      soakSeconds: w.soakSeconds,
      progressDeadlineSeconds: w.progressDeadlineSeconds,
      approval: w.approval,
    })),
    failureBudget: plan.failureBudget,
    onFailure: plan.onFailure,
    offlinePolicy: plan.offlinePolicy,
  };
}
