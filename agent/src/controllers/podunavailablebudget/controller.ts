/**
 * The PodUnavailableBudget controller's reconcile: resolves the pods the budget covers and the
 * replicas expected of them (coverage.ts), has plan.ts compute the status, binds uncovered pods
 * (related-pub annotation, through which admissions find their budget), records the events and
 * writes the status when it changed: at once when admissions depend on the change
 * (`statusChangeIsUrgent`) or events report it, otherwise at most once a second per budget, so
 * an admission storm is not slowed by recounts that conflict with its writes. Bad input (no pods, a missing target, overlapping budgets)
 * ends up in conditions and events, never in an error: only apiserver failures are retried.
 */
import type { PodUnavailableBudget, PodUnavailableBudgetStatus } from '@flotilla/api';
import { isKubeStatus } from '../../errors.js';
import type { Pod } from '../../kube/types.js';
import type { ReadStore } from '../../runtime/cache.js';
import type { Clock } from '../../runtime/clock.js';
import type { Reconciler } from '../../runtime/controller.js';
import type { EventRecording } from '../../runtime/events.js';
import type { ResourceVersionExpectations } from '../../runtime/expectations.js';
import { sameJson } from '../../runtime/kube-object.js';
import type { PubClient } from './client.js';
import { coverageOf, overlapsOf } from './coverage.js';
import { planPub, statusChangeIsUrgent, type PubPlan } from './plan.js';

export interface PubReconcilerDeps {
  pubs: ReadStore<PodUnavailableBudget>;
  /** The pods of a namespace. */
  podsIn: (namespace: string) => Pod[];
  client: PubClient;
  resourceVersions: ResourceVersionExpectations;
  events: EventRecording;
  clock: Clock;
  /** How soon to look again while the cache lags behind this controller's own status write. */
  expectationRequeueMs: number;
  /** A status change that is not urgent (plan.ts) is written at most this often per budget (ms). */
  lazyWriteIntervalMs: number;
}

/** Attempts at a status write that meets a conflict (the webhook's admissions write the same status). */
const WRITE_ATTEMPTS = 4;

export function pubReconciler(deps: PubReconcilerDeps): Reconciler {
  /** When this controller last wrote each budget's status. */
  const lastWrite = new Map<string, number>();

  /**
   * Writes the status planned from `pub`; on a conflict plans it again from the budget as the
   * apiserver has it now (the admissions' newest records and allowance) and writes that, at once:
   * waiting out a backoff would let the records of an admission storm pile up.
   */
  async function writeStatus(
    pub: PodUnavailableBudget,
    status: PodUnavailableBudgetStatus,
    replan: (fresh: PodUnavailableBudget) => PodUnavailableBudgetStatus,
  ): Promise<PodUnavailableBudget | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await deps.client.updateStatus({ ...pub, status });
      } catch (err) {
        if (!isKubeStatus(err, 409) || attempt >= WRITE_ATTEMPTS) throw err;
      }
      const fresh = await deps.client.get(pub.metadata?.namespace ?? '', pub.metadata?.name ?? '');
      if (!fresh) return undefined;
      pub = fresh;
      status = replan(fresh);
      if (sameJson(fresh.status, status)) return undefined;
    }
  }

  return async (key, ctx) => {
    const pub = deps.pubs.get(ctx.namespace, ctx.name);
    if (!pub) {
      deps.resourceVersions.delete(key);
      lastWrite.delete(key);
      return;
    }
    deps.resourceVersions.observed(pub);
    if (!deps.resourceVersions.isSatisfied(key)) return { requeueAfter: deps.expectationRequeueMs };
    const namespace = pub.metadata?.namespace ?? '';
    const namespacePods = deps.podsIn(namespace);
    const coverage = await coverageOf(pub, namespacePods, deps.client);
    const overlaps = overlapsOf(pub, coverage.pods, deps.pubs.list(namespace));
    const planFor = (budget: PodUnavailableBudget): PubPlan =>
      planPub({ pub: budget, ...coverage, overlaps, nowMs: deps.clock.now() });
    const plan = planFor(pub);
    const pods = new Map(coverage.pods.map((p) => [p.metadata.name, p]));
    for (const e of plan.events) {
      const target = e.on === 'pub' ? pub : pods.get(e.on.pod);
      if (target) deps.events.event(target, e.type, e.reason, e.message);
    }
    await Promise.all(plan.bind.map((pod) => deps.client.bindPod(namespace, pod, ctx.name)));
    if (plan.bind.length > 0) ctx.log.debug({ pods: plan.bind }, 'bound pods to the budget');
    const requeueAfter = plan.requeueAfterMs === undefined ? undefined : Math.max(plan.requeueAfterMs, 500);
    const waitMs = await settleStatus(key, pub, plan, planFor);
    const after = Math.min(requeueAfter ?? Infinity, waitMs ?? Infinity);
    return after === Infinity ? undefined : { requeueAfter: after };
  };

  /** Writes the planned status when it changed and is due; else how long until it is. */
  async function settleStatus(
    key: string,
    pub: PodUnavailableBudget,
    plan: PubPlan,
    planFor: (budget: PodUnavailableBudget) => PubPlan,
  ): Promise<number | undefined> {
    if (sameJson(pub.status, plan.status)) return undefined;
    const now = deps.clock.now();
    const due = (lastWrite.get(key) ?? -Infinity) + deps.lazyWriteIntervalMs - now;
    // Events go with the write that ends what they report (an expired record), or they repeat.
    if (due > 0 && plan.events.length === 0 && !statusChangeIsUrgent(pub.status, plan.status)) return due;
    const updated = await writeStatus(pub, plan.status, (fresh) => planFor(fresh).status);
    lastWrite.set(key, now);
    if (updated) deps.resourceVersions.expectUpdated(key, updated);
    return undefined;
  }
}
