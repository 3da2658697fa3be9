/**
 * The PodUnavailableBudget controller's reconcile: resolves the pods the budget covers and the
 * replicas expected of them (coverage.ts), has plan.ts compute the status, binds uncovered pods
 * (related-pub annotation, through which admissions find their budget), records the events and
 * writes the status when it changed. Bad input (no pods, a missing target, overlapping budgets)
 * ends up in conditions and events, never in an error: only apiserver failures are retried.
 */
import type { PodUnavailableBudget } from '@flotilla/api';
import type { Pod } from '../../kube/types.js';
import type { ReadStore } from '../../runtime/cache.js';
import type { Clock } from '../../runtime/clock.js';
import type { Reconciler } from '../../runtime/controller.js';
import type { EventRecording } from '../../runtime/events.js';
import type { ResourceVersionExpectations } from '../../runtime/expectations.js';
import { sameJson } from '../../runtime/kube-object.js';
import type { PubClient } from './client.js';
import { coverageOf, overlapsOf } from './coverage.js';
import { planPub } from './plan.js';

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
}

export function pubReconciler(deps: PubReconcilerDeps): Reconciler {
  return async (key, ctx) => {
    const pub = deps.pubs.get(ctx.namespace, ctx.name);
    if (!pub) {
      deps.resourceVersions.delete(key);
      return;
    }
    deps.resourceVersions.observed(pub);
    if (!deps.resourceVersions.isSatisfied(key)) return { requeueAfter: deps.expectationRequeueMs };
    const namespace = pub.metadata?.namespace ?? '';
    const namespacePods = deps.podsIn(namespace);
    const coverage = await coverageOf(pub, namespacePods, deps.client);
    const overlaps = overlapsOf(pub, coverage.pods, deps.pubs.list(namespace));
    const plan = planPub({ pub, ...coverage, overlaps, nowMs: deps.clock.now() });
    const pods = new Map(coverage.pods.map((p) => [p.metadata.name, p]));
    for (const e of plan.events) {
      const target = e.on === 'pub' ? pub : pods.get(e.on.pod);
      if (target) deps.events.event(target, e.type, e.reason, e.message);
    }
    await Promise.all(plan.bind.map((pod) => deps.client.bindPod(namespace, pod, ctx.name)));
    if (plan.bind.length > 0) ctx.log.debug({ pods: plan.bind }, 'bound pods to the budget');
    if (!sameJson(pub.status, plan.status)) {
      const updated = await deps.client.updateStatus({ ...pub, status: plan.status });
      deps.resourceVersions.expectUpdated(key, updated);
      ctx.log.debug({ status: plan.status }, 'updated status');
    }
    return plan.requeueAfterMs === undefined ? undefined : { requeueAfter: Math.max(plan.requeueAfterMs, 500) };
  };
}
