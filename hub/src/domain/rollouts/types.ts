/**
 * The data of a rollout run: the plan frozen when it starts and the state the scheduler advances.
 * Both are plain JSON (times are epoch milliseconds) so they are stored in Postgres as they are
 * and a restarted hub resumes from exactly what was committed.
 */
import {
  TERMINAL_ROLLOUT_PHASES,
  type AnalysisQuery,
  type MeasurementOutcome,
  type ApprovalGate,
  type CanaryStep,
  type FailureAction,
  type HealthVerdict,
  type OfflinePolicy,
  type RollbackMode,
  type RolloutPhase,
} from '@flotilla/api';

/** A rollout's phases are the REST API's; the terminal ones (nothing moves them again) are api's too. */
export { TERMINAL_ROLLOUT_PHASES, type RolloutPhase };

export interface FrozenWave {
  name: string;
  /** Member clusters in the order they are updated. */
  members: string[];
  /** Clusters updated at once (≥ 1). */
  maxConcurrency: number;
  /** Failed clusters this wave tolerates. */
  failureBudget: number;
  soakSeconds: number;
  progressDeadlineSeconds: number;
  approval: ApprovalGate;
  canarySteps: CanaryStep[];
  /** Metric analysis each cluster passes, once healthy, before its soak; absent: none. */
  analysis?: FrozenAnalysis;
}

export interface FrozenAnalysis {
  queries: AnalysisQuery[];
  intervalSeconds: number;
  count: number;
}

export type AnalysisVerdict = 'Running' | MeasurementOutcome;

/** One query's latest measured value and its outcome (value null: the query gave none). */
export interface AnalysisResult {
  name: string;
  value: number | null;
  outcome: MeasurementOutcome;
  /** Why it is inconclusive or failed (the error, no data, the condition that held). */
  message: string;
}

/**
 * A cluster's metric analysis as the engine last observed it. `attempt` names the run the
 * analysis runner measures (rollout, cluster, attempt): a new attempt starts each time the
 * cluster becomes healthy again or the rollout resumes after an inconclusive analysis.
 */
export interface ClusterAnalysis {
  attempt: number;
  verdict: AnalysisVerdict;
  measurements: number;
  message: string;
  results: AnalysisResult[];
}

export interface FrozenPlan {
  waves: FrozenWave[];
  /** Failed clusters the whole rollout tolerates. */
  failureBudget: number;
  onFailure: FailureAction;
  offlinePolicy: OfflinePolicy;
  /** How onFailure Rollback returns moved clusters; absent (plans frozen before it existed): AllAtOnce. */
  rollback?: RollbackMode;
  /** Pre-pull of each next wave's images while the wave before it soaks; absent: none. */
  prePull?: FrozenPrePull;
}

export interface FrozenPrePull {
  /** How long a wave whose turn came waits for its unfinished pulls (0: it does not wait). */
  maxWaitSeconds: number;
}

/**
 * The pre-pull of a wave's images: placed (ImagePullJobs on its clusters) once the wave before it
 * has moved every cluster and soaks, waited for from the moment the wave could start, ended (the
 * jobs removed) when the wave starts.
 */
export interface WavePrePull {
  placedAt: number;
  waitFrom?: number;
  endedAt?: number;
}

/**
 * At most one rollout per workload is in one of these (the `rollouts_one_active_idx` unique
 * index of db/schema/rollouts.ts spells the same list in SQL).
 */
export const ACTIVE_ROLLOUT_PHASES: readonly RolloutPhase[] = ['Progressing', 'WaitingApproval', 'Paused'];

/** The phases the scheduler steps (a paused rollout does not move). */
export const STEPPABLE_ROLLOUT_PHASES: readonly RolloutPhase[] = ['Progressing', 'WaitingApproval'];

export const isTerminalPhase = (phase: RolloutPhase): boolean => TERMINAL_ROLLOUT_PHASES.includes(phase);
export const isSteppablePhase = (phase: RolloutPhase): boolean => STEPPABLE_ROLLOUT_PHASES.includes(phase);

export type WavePhase = 'Pending' | 'WaitingApproval' | 'Progressing' | 'Succeeded' | 'Failed';

export type ClusterPhase = 'Pending' | 'Updating' | 'Soaking' | 'Succeeded' | 'Failed' | 'Skipped' | 'RolledBack';

export interface WaveState {
  phase: WavePhase;
  approvedBefore: boolean;
  approvedAfter: boolean;
  startedAt?: number;
  finishedAt?: number;
  /** Failures an operator accepted by resuming after a failure pause; budgets count the rest. */
  failuresAccepted: number;
  message: string;
  /** Present once the wave's images were placed for pre-pull (see WavePrePull). */
  prePull?: WavePrePull;
}

export interface ClusterState {
  wave: number;
  phase: ClusterPhase;
  /** Index of the in-cluster canary step in force; equals canarySteps.length for the full update. */
  step: number;
  startedAt?: number;
  /** The cluster fails if it is not healthy by then. */
  deadlineAt?: number;
  /** Healthy without interruption since then (for step pauses and soak). */
  healthySince?: number;
  /**
   * Healthy time credited to a step pause or soak before `freshSince`: time counts only while
   * what the hub heard of the cluster was current (see ClusterObservation.freshUntil).
   */
  creditedMs?: number;
  /** Start of the current stretch of current news; absent while the soak is paused. */
  freshSince?: number;
  finishedAt?: number;
  message: string;
  /**
   * Why a Pending cluster whose turn came was not started (the engine retries each step):
   * outside its maintenance window until `until`, no current news of it, a workload it depends
   * on not healthy there yet, or its wave waits for the pre-pull of its images until `until`.
   */
  blocked?: { reason: 'window' | 'heartbeat' | 'dependency' | 'prePull'; until?: number };
  /** Present once the cluster reached a wave with analysis healthy (see ClusterAnalysis). */
  analysis?: ClusterAnalysis;
}

export interface RolloutState {
  phase: RolloutPhase;
  /** Index of the wave in progress (waves.length once all are done). */
  currentWave: number;
  waves: WaveState[];
  clusters: Record<string, ClusterState>;
  /** Why the rollout is paused, failed or waiting. */
  message: string;
  /** The phase a resume returns to (Paused only). */
  resumeTo?: RolloutPhase;
  /** Set when the scheduler paused because a failure budget was exceeded. */
  pausedForFailure?: boolean;
  failuresAccepted: number;
  updatedAt: number;
}

/** What the hub knows about one member cluster at the moment of a scheduling step. */
export interface ClusterObservation {
  /** False when the cluster's agent missed its heartbeats. */
  online: boolean;
  /** True when the cluster was removed from the fleet. */
  removed: boolean;
  /**
   * Not online, but the hub cannot tell yet: it has been observing for less than a heartbeat
   * timeout (just started, or took over), so heartbeats sent while no hub listened may still be
   * waiting in the status stream. Such a cluster is neither started nor skipped until the hub knows.
   */
  unsure?: boolean;
  /**
   * The hub itself cannot hear NATS (no round trip): it receives nothing from any cluster, so it
   * starts no wave or cluster and fails none for silence until it hears again. Implies unsure.
   */
  hubDeaf?: true;
  /**
   * Until when (epoch ms) what the hub heard of this cluster counts as current: its newest
   * heartbeat or report plus the freshness window, and never past the moment the hub stopped
   * hearing NATS. Soak and step pauses count only time before it. Absent: always current.
   */
  freshUntil?: number;
  /**
   * The workload's health in that cluster judged against the target revision and the generation
   * last sent (api health rules). Stale and Unknown never count as healthy.
   */
  health: HealthVerdict;
  /**
   * The cluster's maintenance windows now, observed for clusters whose turn may come (Pending in
   * the current wave or a later one); absent: no windows, or not needed.
   */
  window?: { open: boolean; opensAt?: number };
  /**
   * The workloads this one depends on, in that cluster, observed like the window: `missing` are
   * not placed there at all (or no longer exist), `waiting` are placed but not healthy at the
   * revision the hub sent there. Absent: no dependencies, or not needed.
   */
  dependencies?: { missing: string[]; waiting: string[] };
  /**
   * What the analysis runner measured for the cluster's current analysis attempt (observed for
   * clusters whose analysis is running); absent: nothing measured yet, or not needed.
   */
  analysis?: Omit<ClusterAnalysis, 'attempt'>;
  /**
   * The pre-pull of the target revision's images there (observed for members of a wave whose
   * pre-pull is placed and not ended); absent: no job reported yet.
   */
  prePull?: ObservedPrePull;
}

/** All of a cluster's pre-pull jobs pulled, one of them failed, or some still pulling. */
export interface ObservedPrePull {
  state: 'Pulling' | 'Pulled' | 'Failed';
  message: string;
}

/** Side effects the scheduler asks the hub to carry out in the same transaction as the state. */
export type RolloutAction =
  | {
      type: 'setRevision';
      cluster: string;
      /** 'target' or 'previous' revision of the rollout. */
      revision: 'target' | 'previous';
      /** In-cluster canary partition (CloneSet, StatefulSet, DaemonSet); absent for a full update. */
      partition?: number | string;
    }
  | { type: 'event'; level: 'info' | 'warning'; message: string; wave?: string; cluster?: string }
  /** Start a rollback rollout that returns these clusters in reverse wave order (staged rollback). */
  | { type: 'stagedRollback'; clusters: string[] }
  /**
   * The wave's pre-pull was placed or ended: bring the rollout's ImagePullJobs in line with its
   * state (pre-pull.ts prePullClusters says which clusters have them).
   */
  | { type: 'prePull'; wave: string; place: boolean };
