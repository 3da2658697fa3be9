/**
 * Pod assignment at admission, run where the apiserver client is (the agent's main thread; the
 * admission thread asks over its port): finds the WorkloadSpread targeting the new pod's owner (a
 * Deployment's pods through their ReplicaSet), records the pod in its status (admit.ts) with
 * conflict retries, and answers the subset to inject. Dry runs are answered without writing.
 * Writes for one WorkloadSpread are serialized, and the copy last written is tried first, so a
 * burst of pods costs one write each.
 */
import { randomUUID } from 'node:crypto';
import { groupOf, type WorkloadSpread, type WorkloadSpreadSubset } from '@flotilla/api';
import { isKubeStatus } from '../../errors.js';
import type { ResourceRef } from '../../runtime/resource.js';
import { admitCreation } from './admit.js';
import { hasPercentSubset, isPodActive, type MatchedSubset, type SpreadPod } from './subsets.js';
import { ReplicaSets, replicasOf, targetResource, type Workload } from './targets.js';

export interface SpreadQuery {
  namespace: string;
  pod: SpreadPod;
  dryRun: boolean;
}

/** The subset a pod goes into and the annotation it gets. */
export interface SpreadAssignment {
  subset: WorkloadSpreadSubset;
  matched: MatchedSubset;
}

export interface SpreadGuard {
  /** Undefined when no WorkloadSpread concerns the pod (or none of its subsets takes it). */
  assign(query: SpreadQuery): Promise<SpreadAssignment | undefined>;
}

/** What the guard reads and writes. */
export interface SpreadStore {
  /** The namespace's WorkloadSpreads, from a cache. */
  list(namespace: string): readonly WorkloadSpread[];
  get(namespace: string, name: string): Promise<WorkloadSpread | undefined>;
  /** Replaces the status; rejects with a 409 KubeApiError when `ws` is stale. */
  updateStatus(ws: WorkloadSpread): Promise<WorkloadSpread>;
  getWorkload(ref: ResourceRef, namespace: string, name: string): Promise<Workload | undefined>;
}

export interface SpreadGuardDeps {
  store: SpreadStore;
  now(): number;
  /** Attempts at writing the status before giving up (OpenKruise: client-go's default backoff, 5). */
  attempts?: number;
  newUid?: () => string;
}

type OwnerRef = NonNullable<SpreadPod['metadata']['ownerReferences']>[number];

const sameTarget = (ws: WorkloadSpread, ref: { apiVersion: string; kind: string; name: string }): boolean => {
  const target = ws.spec.targetRef;
  return groupOf(target.apiVersion) === groupOf(ref.apiVersion) && target.kind === ref.kind && target.name === ref.name;
};

export function spreadGuard(deps: SpreadGuardDeps): SpreadGuard {
  const attempts = deps.attempts ?? 5;
  const newUid = deps.newUid ?? randomUUID;
  const locks = new Map<string, Promise<unknown>>();
  const written = new Map<string, WorkloadSpread>();

  const serialized = <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const next = (locks.get(key) ?? Promise.resolve()).then(work, work);
    const tail = next.catch(() => undefined);
    locks.set(key, tail);
    void tail.then(() => {
      if (locks.get(key) === tail) locks.delete(key);
    });
    return next;
  };

  /** The WorkloadSpread whose target is the owner, or (a ReplicaSet's pods) the owner's Deployment. */
  async function matching(namespace: string, owner: OwnerRef): Promise<WorkloadSpread | undefined> {
    const spreads = deps.store.list(namespace).filter((ws) => !ws.metadata?.deletionTimestamp);
    if (spreads.length === 0) return undefined;
    const direct = spreads.find((ws) => sameTarget(ws, owner));
    if (direct || owner.kind !== 'ReplicaSet' || groupOf(owner.apiVersion) !== 'apps') return direct;
    if (!spreads.some((ws) => ws.spec.targetRef.kind === 'Deployment')) return undefined;
    const rs = await deps.store.getWorkload(ReplicaSets, namespace, owner.name);
    const parent = rs?.metadata.ownerReferences?.find((r) => r.controller) as OwnerRef | undefined;
    return parent ? spreads.find((ws) => sameTarget(ws, parent)) : undefined;
  }

  /** The target's replicas when a percentage needs them; undefined when the target is missing. */
  async function replicas(ws: WorkloadSpread, namespace: string): Promise<number | undefined> {
    if (!hasPercentSubset(ws)) return 0;
    const resource = targetResource(ws);
    const workload = resource && (await deps.store.getWorkload(resource, namespace, ws.spec.targetRef.name));
    return workload ? replicasOf(ws.spec.targetRef.kind, workload) : undefined;
  }

  async function record(
    query: SpreadQuery,
    found: WorkloadSpread,
    total: number,
  ): Promise<SpreadAssignment | undefined> {
    const namespace = query.namespace;
    const name = found.metadata?.name ?? '';
    const uid = query.pod.metadata.name ? undefined : newUid();
    const key = query.pod.metadata.name || uid!;
    let current: WorkloadSpread | undefined = written.get(`${namespace}/${name}`) ?? found;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (!current) return undefined;
      const admitted = admitCreation(current, query.pod, key, total, new Date(deps.now()).toISOString());
      const subset = current.spec.subsets.find((s) => s.name === admitted.subset);
      if (!subset) return undefined;
      const assignment = { subset, matched: { name, subset: subset.name, ...(admitted.status && uid ? { uid } : {}) } };
      if (!admitted.status || query.dryRun) return assignment;
      try {
        written.set(`${namespace}/${name}`, await deps.store.updateStatus({ ...current, status: admitted.status }));
        return assignment;
      } catch (err) {
        written.delete(`${namespace}/${name}`);
        if (!isKubeStatus(err, 409)) throw err;
        current = await deps.store.get(namespace, name);
      }
    }
    throw new Error(`couldn't record the pod in WorkloadSpread ${namespace}/${name}: conflicts`);
  }

  return {
    async assign(query) {
      const owner = query.pod.metadata.ownerReferences?.find((r) => r.controller);
      if (!owner || !isPodActive(query.pod)) return undefined;
      const found = await matching(query.namespace, owner);
      if (!found) return undefined;
      const total = await replicas(found, query.namespace);
      // A target that does not exist: the pod is admitted as it is (the controller reports the problem).
      if (total === undefined) return undefined;
      return serialized(`${query.namespace}/${found.metadata?.name}`, () => record(query, found, total));
    },
  };
}
