/**
 * The rollout scheduler: one active instance among hub replicas (leadership.ts: a session
 * advisory lock on a dedicated connection; standbys retry each tick). Each tick reads every
 * active rollout and what the hub observes of its clusters once, without locks, reports what
 * their clusters wait for (the waits gauge), and steps only the rollouts that would change
 * (step.ts: each in its own transaction that observes again). Most ticks change nothing for most rollouts (soaking, waiting for agents), and skipping their
 * transactions keeps a tick over many rollouts short.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { WAIT_REASONS, type WaitReason } from '@flotilla/api';
import type { Db } from '../../db/client.js';
import { LOCK_KEYS } from '../../db/locks.js';
import { livenessOf, triage } from '../../domain/rollouts/decide.js';
import { isSteppablePhase } from '../../domain/rollouts/types.js';
import type { HearingState } from '../../health/nats-hearing.js';
import type { HubMetrics } from '../../metrics.js';
import { observeRollouts } from '../../repositories/rollout-observations.js';
import { activeRollouts } from '../../repositories/rollouts-repo.js';
import type { DesiredChanges } from '../desired-sync.js';
import { runAnalyses } from './analysis-runner.js';
import { createLeadership } from './leadership.js';
import { sweepEndedPrePulls } from './pre-pull-sync.js';
import type { RolloutNotifier } from './notifier.js';
import { stepRollout, type StepDeps, type StepOutcome, type StepResult } from './step.js';
import { createTickLoop } from './tick-loop.js';

export type { StepOutcome } from './step.js';

/** Kicks (status stored, controls) are coalesced over this long. */
const KICK_DELAY_MS = 50;
/** Steps that change only their rollout's state run this many at a time (pool connections). */
const STATE_STEP_CONCURRENCY = 4;

export interface RolloutSchedulerDeps {
  db: Db;
  /** Leadership needs its own connection: the session lock lives as long as it does. */
  pool: pg.Pool;
  logger: Logger;
  heartbeatTimeoutMs: number;
  tickMs: number;
  now?: () => Date;
  /** Steps run in its transactions; pins and desired state change through it. */
  desired: DesiredChanges;
  metrics?: HubMetrics;
  notifier?: RolloutNotifier;
  /** Soak and step pauses count only while the hub heard a cluster within this long; absent: no rule. */
  freshnessMs?: number;
  /** Whether the hub hears NATS now (nats-hearing.ts); absent: always. */
  hearing?: () => HearingState;
  /** How long one analysis query may take (analysis-runner.ts); absent: its default. */
  analysisQueryTimeoutMs?: number;
  /** Where Prometheus bearer tokens are read by reference; absent: clusters with one are inconclusive. */
  prometheusSecretsDir?: string;
}

export interface RolloutScheduler {
  start(): void;
  /** Stops ticking, waits for a running tick and releases leadership. */
  stop(): Promise<void>;
  /** Asks for a tick soon (status arrived, a control was applied). */
  kick(): void;
  /** One pass over every active rollout if this instance leads; returns what it did. */
  tick(): Promise<StepOutcome[]>;
  /** Steps one rollout (leadership is the caller's business; tests use it directly). */
  step(rolloutId: string): Promise<StepOutcome>;
  isLeader(): boolean;
}

/** Runs `fn` over `items` with at most `limit` at once; results in input order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Sets the waits gauge, every reason (absent ones to zero, so a wait that ended reads 0). */
function reportWaits(metrics: HubMetrics | undefined, waits: Partial<Record<WaitReason, number>>): void {
  for (const reason of WAIT_REASONS) metrics?.rolloutWaits.set({ reason }, waits[reason] ?? 0);
}

/** A step whose failure is logged and retried on the next tick. */
async function stepLogged(
  deps: StepDeps,
  logger: Logger,
  rolloutId: string,
  lockDesired: boolean,
): Promise<StepResult> {
  try {
    return await stepRollout(deps, rolloutId, lockDesired);
  } catch (err) {
    logger.warn({ err, rollout: rolloutId }, 'rollout step failed; retrying next tick');
    return { rolloutId, changed: false, desiredChanged: 0 };
  }
}

export function createRolloutScheduler(deps: RolloutSchedulerDeps): RolloutScheduler {
  const now = deps.now ?? ((): Date => new Date());
  const leadership = createLeadership({
    pool: deps.pool,
    key: LOCK_KEYS.scheduler,
    logger: deps.logger,
    now,
    what: 'rollout scheduler',
  });
  const liveness = () =>
    livenessOf({
      heartbeatTimeoutMs: deps.heartbeatTimeoutMs,
      freshnessMs: deps.freshnessMs,
      leaderSince: leadership.since(),
      hearing: deps.hearing?.(),
    });
  const analysisDeps = {
    db: deps.db,
    logger: deps.logger,
    now,
    ...(deps.analysisQueryTimeoutMs === undefined ? {} : { queryTimeoutMs: deps.analysisQueryTimeoutMs }),
    ...(deps.prometheusSecretsDir === undefined ? {} : { secretsDir: deps.prometheusSecretsDir }),
  };
  const stepDeps: StepDeps = { desired: deps.desired, now, liveness, metrics: deps.metrics, notifier: deps.notifier };

  const guardedStep = (rolloutId: string, lockDesired: boolean): Promise<StepResult> =>
    stepLogged(stepDeps, deps.logger, rolloutId, lockDesired);

  async function tick(): Promise<StepOutcome[]> {
    const leads = await leadership.lead();
    deps.metrics?.schedulerLeader.set(leads ? 1 : 0);
    if (!leads) {
      reportWaits(deps.metrics, {});
      return [];
    }
    const at = now();
    // Pre-pull jobs of rollouts that ended by an operator's control go first (rarely any); a
    // failure is logged and retried next tick, never holding the steps.
    await sweepEndedPrePulls(deps.db, deps.desired).catch((err: unknown) =>
      deps.logger.warn({ err }, 'removing pre-pull jobs of ended rollouts failed; retrying next tick'),
    );
    const rows = await activeRollouts(deps.db);
    if (rows.length === 0) {
      reportWaits(deps.metrics, {});
      return [];
    }
    // Due analysis measurements first, so this tick's observation sees them. A failure here is
    // logged and retried next tick; it never holds the steps.
    try {
      await runAnalyses(analysisDeps, rows);
    } catch (err) {
      deps.logger.warn({ err }, 'analysis measurements failed; retrying next tick');
    }
    const sorted = triage(rows, await observeRollouts(deps.db, rows), at, liveness());
    reportWaits(deps.metrics, sorted.waits);
    // Paused rollouts are read for their waits only; they are not stepped.
    const out: StepOutcome[] = sorted.idle
      .filter((r) => isSteppablePhase(r.state.phase))
      .map((r) => ({ rolloutId: r.id, changed: false, desiredChanged: 0 }));
    const withDesired = sorted.withDesired.map((r) => r.id);
    // Steps that touch only their own rollout run a few at a time; steps that write desired state
    // serialize on the desired-state lock anyway, so they run one after the other.
    const ids = sorted.stateOnly.map((r) => r.id);
    for (const o of await mapLimit(ids, STATE_STEP_CONCURRENCY, (id) => guardedStep(id, false))) {
      if (o.needsDesired) withDesired.push(o.rolloutId);
      else out.push(o);
    }
    for (const id of withDesired) out.push(await guardedStep(id, true));
    return out;
  }

  const loop = createTickLoop({
    tick,
    tickMs: deps.tickMs,
    kickDelayMs: KICK_DELAY_MS,
    onError: (err) => deps.logger.warn({ err }, 'rollout scheduler tick failed'),
  });
  return {
    start: () => loop.start(),
    async stop() {
      await loop.stop();
      await leadership.resign();
      deps.metrics?.schedulerLeader.set(0);
    },
    kick: () => loop.kick(),
    tick,
    step: (rolloutId) => stepRollout(stepDeps, rolloutId, true),
    isLeader: () => leadership.isLeader(),
  };
}
