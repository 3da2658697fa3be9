/**
 * The API's closed value lists, as plain constants. This module has no run-time imports, so a
 * client that needs only these lists (the `flotilla` CLI, through `@flotilla/api/enums`) loads
 * them without building the schemas, which takes most of a second. The schemas type-check
 * against these lists, or these lists against the schemas, so the two cannot drift apart.
 */
import type { WorkloadKind } from './protocol/messages.js';
import type { RolloutPhase } from './rest/rollouts.js';

/** Compiles to `true` only when `List` names every member of `Union`. */
type Covers<Union, List extends readonly unknown[]> = [Exclude<Union, List[number]>] extends [never] ? true : false;

/** Kinds the hub distributes (the `WorkloadKind` schema, every member). */
export const WORKLOAD_KINDS = [
  'CloneSet',
  'SidecarSet',
  'ImagePullJob',
  'BroadcastJob',
  'DaemonSet',
  'StatefulSet',
  'PodUnavailableBudget',
  'WorkloadSpread',
] as const satisfies readonly WorkloadKind[];
const _everyKind: Covers<WorkloadKind, typeof WORKLOAD_KINDS> = true;
void _everyKind;

/** When an operator must approve a wave: before it starts, after it finished, or both. */
export const APPROVAL_GATES = ['None', 'Before', 'After', 'BeforeAndAfter'] as const;
export type ApprovalGate = (typeof APPROVAL_GATES)[number];

/** What happens when failures exceed a budget. */
export const FAILURE_ACTIONS = ['Pause', 'Rollback', 'Continue'] as const;
export type FailureAction = (typeof FAILURE_ACTIONS)[number];

/**
 * How `onFailure: Rollback` returns the clusters a rollout moved: `AllAtOnce`, or `Staged` — a
 * rollback rollout over those clusters in reverse wave order with the same gates and soak.
 */
export const ROLLBACK_MODES = ['AllAtOnce', 'Staged'] as const;
export type RollbackMode = (typeof ROLLBACK_MODES)[number];

/** What happens to a cluster that is offline or removed when its turn comes. */
export const OFFLINE_POLICIES = ['Skip', 'Fail'] as const;
export type OfflinePolicy = (typeof OFFLINE_POLICIES)[number];

/** A rollout in one of these is over: nothing moves it again. */
export const TERMINAL_ROLLOUT_PHASES: readonly RolloutPhase[] = ['Succeeded', 'Failed', 'Aborted', 'RolledBack'];

/**
 * What a cluster of an active rollout waits for, one reason at a time: `previousWave` (its wave
 * has not started), `approval` (its wave waits for an operator), `concurrency` (its wave runs as
 * many clusters as it may), `window` (outside the cluster's maintenance window), `heartbeat` (the
 * hub has no current news of the cluster, or cannot hear NATS), `dependency` (a workload this one
 * depends on is not healthy at its target revision in that cluster), `prePull` (its wave waits,
 * for a bounded time, for the new images to be pulled on its nodes), `health` (started, not healthy
 * yet), `analysis` (healthy, its metric analysis is measuring), `canaryPause` (healthy, holding at an in-cluster canary step), `soak` (healthy, soaking),
 * `paused` (the rollout is paused).
 */
export const WAIT_REASONS = [
  'previousWave',
  'approval',
  'concurrency',
  'window',
  'heartbeat',
  'dependency',
  'prePull',
  'health',
  'analysis',
  'canaryPause',
  'soak',
  'paused',
] as const;
export type WaitReason = (typeof WAIT_REASONS)[number];
