/**
 * Rollouts: move a workload's clusters to a revision in waves. The strategy's own schema lives in
 * `rollout/strategy.ts`; requests carry it as JSON and the hub validates it with
 * `validateRolloutStrategy`, so every problem comes back with its field path.
 */
import { Type, type Static } from 'typebox';
import { WAIT_REASONS, type WaitReason } from '../enums.js';
import { AnalysisSchema } from '../rollout/strategy.js';
import { Page, PageQuery, Revision } from './common.js';

export const RolloutPhase = Type.Union([
  Type.Literal('Progressing'),
  Type.Literal('WaitingApproval'),
  Type.Literal('Paused'),
  Type.Literal('Succeeded'),
  Type.Literal('Failed'),
  Type.Literal('Aborted'),
  Type.Literal('RolledBack'),
]);
export type RolloutPhase = Static<typeof RolloutPhase>;

export const CreateRolloutRequest = Type.Object(
  {
    /** Defaults to the workload's latest revision. */
    revision: Type.Optional(Revision),
    /** A RolloutStrategy: { waves: [...], failureBudget?, onFailure?, offlinePolicy? }. */
    strategy: Type.Record(Type.String(), Type.Unknown(), { description: 'RolloutStrategy' }),
    /** Answer 200 with the RolloutPreview of the plan a start would freeze now; start nothing. */
    dryRun: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateRolloutRequest = Static<typeof CreateRolloutRequest>;

const Time = Type.Union([Type.String(), Type.Null()]);

/** A wave's settings as a plan froze them (every percentage resolved against the wave's size). */
const WaveSettings = {
  name: Type.String(),
  /** Member clusters in the order they are updated. */
  members: Type.Array(Type.String()),
  maxConcurrency: Type.Integer(),
  failureBudget: Type.Integer(),
  soakSeconds: Type.Integer(),
  progressDeadlineSeconds: Type.Integer(),
  approval: Type.String(),
  /** The wave's metric analysis with its defaults filled in; absent: none. */
  analysis: Type.Optional(AnalysisSchema),
};

export const RolloutWaveStatus = Type.Object({
  ...WaveSettings,
  phase: Type.String(),
  approvedBefore: Type.Boolean(),
  approvedAfter: Type.Boolean(),
  startedAt: Time,
  finishedAt: Time,
  message: Type.String(),
  /** The pre-pull of the wave's images (strategy.prePull): placed during the soak before it, ended when it started. */
  prePull: Type.Optional(Type.Object({ placedAt: Type.String(), waitFrom: Time, endedAt: Time })),
});
export type RolloutWaveStatus = Static<typeof RolloutWaveStatus>;

/** A cluster's metric analysis: its current attempt and the latest value of each query. */
export const RolloutClusterAnalysis = Type.Object({
  attempt: Type.Integer(),
  verdict: Type.Union([
    Type.Literal('Running'),
    Type.Literal('Passed'),
    Type.Literal('Failed'),
    Type.Literal('Inconclusive'),
  ]),
  measurements: Type.Integer(),
  count: Type.Integer(),
  message: Type.String(),
  results: Type.Array(
    Type.Object({
      name: Type.String(),
      value: Type.Union([Type.Number(), Type.Null()]),
      outcome: Type.String(),
      message: Type.String(),
    }),
  ),
});
export type RolloutClusterAnalysis = Static<typeof RolloutClusterAnalysis>;

export const RolloutClusterStatus = Type.Object({
  name: Type.String(),
  wave: Type.String(),
  phase: Type.String(),
  /** In-cluster canary step in force (equals the wave's step count for the full update). */
  step: Type.Integer(),
  startedAt: Time,
  deadlineAt: Time,
  healthySince: Time,
  finishedAt: Time,
  message: Type.String(),
  /** What the cluster waits for now (null: nothing, it is done or the rollout is over). */
  waitingFor: Type.Union([Type.Unsafe<WaitReason>({ type: 'string', enum: [...WAIT_REASONS] }), Type.Null()]),
  /** When that wait ends at the latest, if known (a maintenance window's next opening). */
  waitingUntil: Time,
  /** The revision the hub sends the cluster now (null: nothing sent). */
  desiredRevision: Type.Union([Type.Integer(), Type.Null()]),
  /** The revision the cluster's agent last reported running (null: no report yet). */
  runningRevision: Type.Union([Type.Integer(), Type.Null()]),
  /** The cluster's metric analysis (its wave has one and it got that far); null: none. */
  analysis: Type.Optional(Type.Union([RolloutClusterAnalysis, Type.Null()])),
});
export type RolloutClusterStatus = Static<typeof RolloutClusterStatus>;

export const Rollout = Type.Object({
  id: Type.String(),
  workloadId: Type.String(),
  targetRevision: Type.Integer(),
  previousRevision: Type.Integer(),
  rollbackOf: Type.Union([Type.String(), Type.Null()]),
  strategy: Type.Record(Type.String(), Type.Unknown()),
  phase: RolloutPhase,
  /** Name of the wave in progress; null once every wave is done. */
  currentWave: Type.Union([Type.String(), Type.Null()]),
  message: Type.String(),
  failureBudget: Type.Integer(),
  onFailure: Type.String(),
  offlinePolicy: Type.String(),
  waves: Type.Array(RolloutWaveStatus),
  clusters: Type.Array(RolloutClusterStatus),
  /** Member clusters waiting, by reason (reasons with none are absent). */
  waits: Type.Record(Type.String(), Type.Integer()),
  /** How many member clusters report running each revision, lowest revision first. */
  revisions: Type.Array(Type.Object({ revision: Type.Integer(), clusters: Type.Integer() })),
  /** Member clusters run more than one revision. */
  skew: Type.Boolean(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  createdBy: Type.String(),
});
export type Rollout = Static<typeof Rollout>;

export const RolloutList = Page(Rollout);
export type RolloutList = Static<typeof RolloutList>;
export const RolloutListQuery = PageQuery;

export const RolloutIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export type RolloutIdParams = Static<typeof RolloutIdParams>;

export const RolloutControl = Type.Union([
  Type.Literal('pause'),
  Type.Literal('resume'),
  Type.Literal('approve'),
  Type.Literal('abort'),
  Type.Literal('retry'),
]);
export const RolloutControlParams = Type.Object({ id: Type.String({ maxLength: 64 }), control: RolloutControl });
export type RolloutControlParams = Static<typeof RolloutControlParams>;

/** Optional body of a control: a reason for the audit log; for approve, the wave expected to wait. */
export const RolloutControlRequest = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 1024 })), wave: Type.Optional(Type.String({ maxLength: 63 })) },
  { additionalProperties: false },
);
export type RolloutControlRequest = Static<typeof RolloutControlRequest>;

/** One entry of a rollout's history (also the `data` of each server-sent event). */
export const RolloutEvent = Type.Object({
  id: Type.String(),
  rolloutId: Type.String(),
  at: Type.String(),
  level: Type.String(),
  message: Type.String(),
  wave: Type.Union([Type.String(), Type.Null()]),
  cluster: Type.Union([Type.String(), Type.Null()]),
  phase: Type.String(),
});
export type RolloutEvent = Static<typeof RolloutEvent>;

/**
 * Why a cluster is in a previewed plan or out of it, or what will hold it: `selector` (the
 * workload's placement targets it, or does not), `state` (not an accepted cluster), `offline`
 * (no heartbeat now: skipped or failed at its turn by the offline policy unless it returns),
 * `window` (outside its maintenance windows now; waits for the next opening).
 */
export const PREVIEW_REASONS = ['selector', 'state', 'offline', 'window'] as const;
export type PreviewReason = (typeof PREVIEW_REASONS)[number];

/** One change between the manifest a cluster has now and the one it would get. */
export const ManifestChange = Type.Object({
  /** JSON path of the field, e.g. `spec.template.spec.containers[0].image`. */
  path: Type.String(),
  /** Absent: the field is added. */
  from: Type.Optional(Type.Unknown()),
  /** Absent: the field is removed. */
  to: Type.Optional(Type.Unknown()),
});
export type ManifestChange = Static<typeof ManifestChange>;

export const PreviewCluster = Type.Object({
  name: Type.String(),
  /** In the plan (and in which wave), or left out. */
  included: Type.Boolean(),
  wave: Type.Union([Type.String(), Type.Null()]),
  reasons: Type.Array(
    Type.Object({
      reason: Type.Unsafe<PreviewReason>({ type: 'string', enum: [...PREVIEW_REASONS] }),
      message: Type.String(),
    }),
  ),
  /** When the cluster is expected to start (null: not in the plan). */
  expectedStartAt: Time,
  /** The revision the hub sends the cluster now (null: nothing). */
  currentRevision: Type.Union([Type.Integer(), Type.Null()]),
  /** The manifest the cluster would get at the target revision, overrides applied (null: not in the plan). */
  manifest: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  /** What changes from the manifest it has now (one change at the root `''` when it has none). */
  diff: Type.Array(ManifestChange),
});
export type PreviewCluster = Static<typeof PreviewCluster>;

export const PreviewWave = Type.Object({
  ...WaveSettings,
  /** In-cluster canary steps: the partition held and the pause of each. */
  canarySteps: Type.Array(
    Type.Object({ partition: Type.Union([Type.Integer(), Type.String()]), pauseSeconds: Type.Integer() }),
  ),
  /**
   * Expected start and end from soak times, canary pauses, concurrency and maintenance windows,
   * with clusters healthy at once and approvals given at once (a lower bound).
   */
  expectedStartAt: Type.String(),
  expectedEndAt: Type.String(),
  /**
   * The wave's images are pre-pulled while the wave before it soaks; when its turn comes it waits
   * at most maxWaitSeconds for unfinished pulls (not counted in the expected times). Absent: none.
   */
  prePull: Type.Optional(Type.Object({ maxWaitSeconds: Type.Integer() })),
});
export type PreviewWave = Static<typeof PreviewWave>;

/** The plan a rollout would freeze now (POST …/rollouts with dryRun: true); nothing is started. */
export const RolloutPreview = Type.Object({
  workloadId: Type.String(),
  targetRevision: Type.Integer(),
  previousRevision: Type.Integer(),
  failureBudget: Type.Integer(),
  onFailure: Type.String(),
  offlinePolicy: Type.String(),
  waves: Type.Array(PreviewWave),
  /** Every cluster of the fleet (removed ones aside): the plan's in wave order, then the rest by name. */
  clusters: Type.Array(PreviewCluster),
  /** The time the preview was computed; expected times count from it. */
  at: Type.String(),
});
export type RolloutPreview = Static<typeof RolloutPreview>;
