/**
 * Freezes a strategy into a plan: which clusters go in which wave and in what order, with every
 * percentage resolved against the wave's real size. Done once when a rollout starts; clusters
 * that join the fleet later are not added to a running rollout.
 */
import {
  DEFAULT_ANALYSIS_COUNT,
  DEFAULT_ANALYSIS_INTERVAL_SECONDS,
  DEFAULT_PRE_PULL_MAX_WAIT_SECONDS,
  DEFAULT_PROGRESS_DEADLINE_SECONDS,
  scaledValue,
  selectorMatches,
  type FieldError,
  type RolloutStrategy,
  type Wave,
} from '@flotilla/api';
import type { FrozenPlan, FrozenWave } from './types.js';

export interface PlanCluster {
  name: string;
  labels: Record<string, string>;
}

export type FreezeResult = { ok: true; plan: FrozenPlan } | { ok: false; errors: FieldError[] };

/** Orders by the label's value (numerically when both are numbers), clusters without it last, then by name. */
export function orderMembers(clusters: PlanCluster[], key: string | undefined): string[] {
  const value = (c: PlanCluster): string | undefined => (key ? c.labels[key] : undefined);
  return [...clusters]
    .sort((a, b) => {
      const va = value(a);
      const vb = value(b);
      if (va !== vb) {
        if (va === undefined) return 1;
        if (vb === undefined) return -1;
        const na = Number(va);
        const nb = Number(vb);
        if (va.trim() !== '' && vb.trim() !== '' && Number.isFinite(na) && Number.isFinite(nb) && na !== nb)
          return na - nb;
        return va < vb ? -1 : 1;
      }
      return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
    })
    .map((c) => c.name);
}

function waveMembers(wave: Wave, targeted: PlanCluster[], taken: Set<string>): PlanCluster[] {
  const { clusters } = wave;
  if (!clusters) return targeted.filter((c) => !taken.has(c.name));
  if (clusters.names) return targeted.filter((c) => clusters.names!.includes(c.name));
  return targeted.filter((c) => selectorMatches(clusters.selector ?? {}, c.labels));
}

function freezeWave(wave: Wave, members: PlanCluster[]): FrozenWave {
  const n = members.length;
  return {
    name: wave.name,
    members: orderMembers(members, wave.orderBy),
    maxConcurrency: Math.max(1, Math.min(n, scaledValue(wave.maxConcurrency ?? '100%', n, true) ?? n)),
    failureBudget: scaledValue(wave.failureBudget ?? 0, n, false) ?? 0,
    soakSeconds: wave.soakSeconds ?? 0,
    progressDeadlineSeconds: wave.progressDeadlineSeconds ?? DEFAULT_PROGRESS_DEADLINE_SECONDS,
    approval: wave.approval ?? 'None',
    canarySteps: wave.canarySteps ?? [],
    ...(wave.analysis
      ? {
          analysis: {
            queries: wave.analysis.queries,
            intervalSeconds: wave.analysis.intervalSeconds ?? DEFAULT_ANALYSIS_INTERVAL_SECONDS,
            count: wave.analysis.count ?? DEFAULT_ANALYSIS_COUNT,
          },
        }
      : {}),
  };
}

/**
 * Builds the frozen plan for the clusters the workload targets. Errors name the wave: a wave
 * that matches no cluster, a cluster claimed by two waves, a named cluster the placement does not
 * target, or targeted clusters that no wave takes.
 */
export function freezePlan(strategy: RolloutStrategy, targeted: PlanCluster[]): FreezeResult {
  const errors: FieldError[] = [];
  const owner = new Map<string, string>();
  const waves: FrozenWave[] = [];
  const targetedNames = new Set(targeted.map((c) => c.name));
  strategy.waves.forEach((wave, i) => {
    const path = `waves[${i}]`;
    for (const name of wave.clusters?.names ?? []) {
      if (!targetedNames.has(name)) {
        errors.push({
          path: `${path}.clusters.names`,
          code: 'NotFound',
          message: `cluster "${name}" is not targeted by the workload's placement (or not accepted)`,
        });
      }
    }
    const members = waveMembers(wave, targeted, new Set(owner.keys()));
    if (members.length === 0) {
      errors.push({ path, code: 'Invalid', message: `wave "${wave.name}" matches no targeted cluster` });
    }
    for (const m of members) {
      const previous = owner.get(m.name);
      if (previous !== undefined) {
        errors.push({
          path,
          code: 'Duplicate',
          message: `cluster "${m.name}" is in wave "${previous}" and in wave "${wave.name}"; waves must not overlap`,
        });
      } else owner.set(m.name, wave.name);
    }
    waves.push(freezeWave(wave, members));
  });
  const left = targeted.filter((c) => !owner.has(c.name)).map((c) => c.name);
  if (left.length > 0) {
    errors.push({
      path: 'waves',
      code: 'Invalid',
      message: `targeted clusters in no wave: ${left.join(', ')}; add them to a wave or end with a wave without clusters`,
    });
  }
  if (errors.length > 0) return { ok: false, errors };
  const total = targeted.length;
  return {
    ok: true,
    plan: {
      waves,
      failureBudget: scaledValue(strategy.failureBudget ?? '100%', total, false) ?? total,
      onFailure: strategy.onFailure ?? 'Rollback',
      offlinePolicy: strategy.offlinePolicy ?? 'Skip',
      rollback: strategy.rollback ?? 'AllAtOnce',
      ...(strategy.prePull && strategy.prePull.enabled !== false
        ? { prePull: { maxWaitSeconds: strategy.prePull.maxWaitSeconds ?? DEFAULT_PRE_PULL_MAX_WAIT_SECONDS } }
        : {}),
    },
  };
}

/** A frozen wave's settings as the REST API shows them (status and preview alike). */
export function waveSettings(
  w: FrozenWave,
): Pick<
  FrozenWave,
  | 'name'
  | 'members'
  | 'maxConcurrency'
  | 'failureBudget'
  | 'soakSeconds'
  | 'progressDeadlineSeconds'
  | 'approval'
  | 'analysis'
> {
  return {
    name: w.name,
    members: w.members,
    maxConcurrency: w.maxConcurrency,
    failureBudget: w.failureBudget,
    soakSeconds: w.soakSeconds,
    progressDeadlineSeconds: w.progressDeadlineSeconds,
    approval: w.approval,
    ...(w.analysis ? { analysis: w.analysis } : {}),
  };
}
