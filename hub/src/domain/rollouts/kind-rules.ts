/**
 * What a rollout strategy may ask of a workload's kind, pure: pre-pull pulls the images of a
 * CloneSet's pod template, and an in-cluster canary step holds pods back by a partition, which
 * only the kinds desired-plan.ts writes one for have. A step on any other kind would pass unheld.
 */
import type { RolloutStrategy } from '@flotilla/api';
import { PARTITIONED_KINDS } from '../desired-plan.js';

export interface KindProblem {
  path: string;
  message: string;
}

/** Everything in `strategy` the workload's `kind` cannot do, each naming its field. */
export function strategyKindProblems(kind: string, strategy: RolloutStrategy): KindProblem[] {
  const out: KindProblem[] = [];
  if (strategy.prePull && strategy.prePull.enabled !== false && kind !== 'CloneSet') {
    out.push({
      path: 'strategy.prePull',
      message: `pre-pull applies to CloneSet workloads; this workload is a ${kind}`,
    });
  }
  strategy.waves.forEach((wave, i) => {
    if ((wave.canarySteps?.length ?? 0) === 0 || PARTITIONED_KINDS.has(kind)) return;
    out.push({
      path: `strategy.waves[${i}].canarySteps`,
      message: `canary steps set a partition, which CloneSet, StatefulSet and DaemonSet workloads have; this workload is a ${kind}`,
    });
  });
  return out;
}
