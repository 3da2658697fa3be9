/**
 * A fleet rollout strategy: the waves a new workload revision moves through, with their gates,
 * budgets and timings. One schema gives the REST API its validator, the hub its TypeScript type
 * and the OpenAPI document its description.
 */
import Type, { type Static, type TUnsafe } from 'typebox';
import { intOrString, int32, strictObject } from '../kruise/common/markers.js';
import { LabelSelectorSchema } from '../kruise/common/meta.js';
import { APPROVAL_GATES, FAILURE_ACTIONS, OFFLINE_POLICIES, ROLLBACK_MODES } from '../enums.js';

export const DEFAULT_PROGRESS_DEADLINE_SECONDS = 600;

/** A string enum whose static type is the union of its values. */
function oneOf<const T extends readonly string[]>(values: T): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values] });
}

/** One in-cluster canary step of a CloneSet, Advanced StatefulSet or DaemonSet: hold `partition` pods back, then wait. */
export const CanaryStepSchema = strictObject(
  {
    partition: intOrString({
      description:
        'pods (nodes for a DaemonSet) kept at the previous revision in this step, e.g. "90%" or 9: a CloneSet\'s ' +
        "spec.updateStrategy.partition, a StatefulSet's or DaemonSet's spec.updateStrategy.rollingUpdate.partition",
    }),
    pauseSeconds: Type.Optional(int32({ description: 'how long the step must stay healthy before the next one' })),
  },
  { description: 'An in-cluster canary step (CloneSet, StatefulSet and DaemonSet workloads).' },
);
export type CanaryStep = Static<typeof CanaryStepSchema>;

export const WaveClustersSchema = strictObject(
  {
    names: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'clusters by name' })),
    selector: Type.Optional(LabelSelectorSchema),
  },
  { description: 'Which clusters belong to the wave. Absent: every targeted cluster no earlier wave took.' },
);

/** One PromQL query of a wave's analysis, judged by simple comparisons of its one value. */
export const AnalysisQuerySchema = strictObject({
  name: Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' }),
  query: Type.String({
    maxLength: 4096,
    description: 'PromQL returning one value; may use {{cluster}}, {{namespace}} and {{workload}}',
  }),
  successCondition: Type.Optional(Type.String({ maxLength: 200, description: 'e.g. "result < 0.05"' })),
  failureCondition: Type.Optional(Type.String({ maxLength: 200, description: 'e.g. "result >= 0.1"' })),
});
export type AnalysisQuery = Static<typeof AnalysisQuerySchema>;

/**
 * Metric analysis of each cluster of a wave once it is healthy at the target revision: `count`
 * measurements `intervalSeconds` apart, against the cluster's Prometheus, before its soak.
 */
export const AnalysisSchema = strictObject({
  queries: Type.Array(AnalysisQuerySchema, { minItems: 1, maxItems: 10 }),
  intervalSeconds: Type.Optional(int32({ minimum: 1, maximum: 3600, description: 'between measurements; default 60' })),
  count: Type.Optional(int32({ minimum: 1, maximum: 100, description: 'measurements; default 3' })),
});
export type Analysis = Static<typeof AnalysisSchema>;

export const DEFAULT_ANALYSIS_INTERVAL_SECONDS = 60;
export const DEFAULT_ANALYSIS_COUNT = 3;

export const WaveSchema = strictObject({
  name: Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' }),
  clusters: Type.Optional(WaveClustersSchema),
  orderBy: Type.Optional(
    Type.String({ minLength: 1, description: 'cluster label key whose value orders the wave (then name)' }),
  ),
  maxConcurrency: Type.Optional(intOrString({ description: 'clusters updated at once; default all' })),
  failureBudget: Type.Optional(intOrString({ description: 'failed clusters tolerated in this wave; default 0' })),
  soakSeconds: Type.Optional(int32({ description: 'a cluster must stay healthy this long to succeed' })),
  progressDeadlineSeconds: Type.Optional(int32({ minimum: 1, description: 'time for a cluster to become healthy' })),
  approval: Type.Optional(oneOf(APPROVAL_GATES)),
  canarySteps: Type.Optional(Type.Array(CanaryStepSchema, { maxItems: 20 })),
  analysis: Type.Optional(AnalysisSchema),
});
export type Wave = Static<typeof WaveSchema>;

/**
 * Pre-pull of the next wave: while a wave soaks, the hub places an ImagePullJob per image of the
 * target revision on the next wave's clusters; that wave starts when the pulls finished, or once
 * it waited `maxWaitSeconds` for them after the wave before it finished.
 */
export const PrePullSchema = strictObject({
  enabled: Type.Optional(Type.Boolean({ description: 'default true when prePull is given' })),
  maxWaitSeconds: Type.Optional(
    int32({
      minimum: 0,
      maximum: 3600,
      description: 'how long the next wave waits for unfinished pulls; 0: never waits; default 300',
    }),
  ),
});
export type PrePull = Static<typeof PrePullSchema>;

export const DEFAULT_PRE_PULL_MAX_WAIT_SECONDS = 300;

export const RolloutStrategySchema = strictObject({
  waves: Type.Array(WaveSchema, { minItems: 1, maxItems: 50 }),
  failureBudget: Type.Optional(intOrString({ description: 'failed clusters tolerated over the whole rollout' })),
  onFailure: Type.Optional(oneOf(FAILURE_ACTIONS)),
  rollback: Type.Optional(oneOf(ROLLBACK_MODES)),
  offlinePolicy: Type.Optional(oneOf(OFFLINE_POLICIES)),
  prePull: Type.Optional(PrePullSchema),
});
export type RolloutStrategy = Static<typeof RolloutStrategySchema>;
