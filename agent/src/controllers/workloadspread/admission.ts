/**
 * Pod admission against WorkloadSpreads, run where the apiserver client is (the agent's main
 * thread; the admission thread asks over its port), as OpenKruise v1.9's pod webhooks:
 * - CREATE: finds the WorkloadSpread targeting the new pod's owner (a Deployment's pods through
 *   their ReplicaSet), records the pod under its subset's creatingPods (admit.ts) and answers the
 *   subset to inject;
 * - DELETE and eviction: a pod placed by a WorkloadSpread (its matched-workloadspread annotation)
 *   and still active is recorded under its subset's deletingPods, missingReplicas one higher, so
 *   the replacement created while it terminates goes back to that subset; the controller drops the
 *   record once it sees the pod terminating or gone. An evicted pod is read first.
 * Status writes retry on conflicts; dry runs are answered without writing. Writes for one
 * WorkloadSpread are serialized, and the copy last written is tried first, so a burst of pods costs
 * one write each.
 */
import { randomUUID } from 'node:crypto';
import { groupOf, type WorkloadSpread, type WorkloadSpreadSubset } from '@flotilla/api';
import { isKubeStatus } from '../../errors.js';
import type { ResourceRef } from '../../runtime/resource.js';
import { admitCreation, admitDeletion, type Admitted } from './admit.js';
import { hasPercentSubset, isPodActive, matchedSubsetOf, type MatchedSubset, type SpreadPod } from './subsets.js';
import { ReplicaSets, replicasOf, targetResource, type Workload } from './targets.js';

export interface SpreadQuery {
  namespace: string;
  /** The pod created, or deleted (the stored pod); for an eviction only its name is known. */
  pod: SpreadPod;
  dryRun: boolean;
  /** CREATE (the default) places the pod; DELETE and EVICT record it as leaving its subset. */
  operation?: 'CREATE' | 'DELETE' | 'EVICT';
}

/** The subset a pod goes into and the annotation it gets. */
export interface SpreadAssignment {
  subset: WorkloadSpreadSubset;
  matched: MatchedSubset;
}

export interface SpreadGuard {
  /**
   * CREATE: the subset to inject; undefined when no WorkloadSpread concerns the pod (or none of its
   * subsets takes it). DELETE/EVICT: always undefined, once the deletion is recorded.
   */
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
  /** A pod as stored (evictions name only the pod), or undefined when it does not exist. */
  getPod(namespace: string, name: string): Promise<SpreadPod | undefined>;
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

  /**
   * Writes the status `step` derives from the WorkloadSpread, re-reading it on a conflict. Answers
   * the step's subset (undefined when the step finds none); a dry run or a step that changes
   * nothing writes nothing.
   */
  async function write(
    namespace: string,
    found: WorkloadSpread,
    dryRun: boolean,
    step: (ws: WorkloadSpread) => Admitted,
  ): Promise<string | undefined> {
    const name = found.metadata?.name ?? '';
    let current: WorkloadSpread | undefined = written.get(`${namespace}/${name}`) ?? found;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (!current) return undefined;
      const admitted = step(current);
      if (!admitted.status || dryRun) return admitted.subset;
      try {
        written.set(`${namespace}/${name}`, await deps.store.updateStatus({ ...current, status: admitted.status }));
        return admitted.subset;
      } catch (err) {
        written.delete(`${namespace}/${name}`);
        if (!isKubeStatus(err, 409)) throw err;
        current = await deps.store.get(namespace, name);
      }
    }
    throw new Error(`couldn't record the pod in WorkloadSpread ${namespace}/${name}: conflicts`);
  }

  async function record(
    query: SpreadQuery,
    found: WorkloadSpread,
    total: number,
  ): Promise<SpreadAssignment | undefined> {
    const name = found.metadata?.name ?? '';
    const uid = query.pod.metadata.name ? undefined : newUid();
    const key = query.pod.metadata.name || uid!;
    let recorded = false;
    let spec = found.spec;
    const subsetName = await write(query.namespace, found, query.dryRun, (ws) => {
      const admitted = admitCreation(ws, query.pod, key, total, new Date(deps.now()).toISOString());
      recorded = admitted.status !== undefined;
      spec = ws.spec;
      return admitted;
    });
    const subset = spec.subsets.find((s) => s.name === subsetName);
    if (!subset) return undefined;
    return { subset, matched: { name, subset: subset.name, ...(recorded && uid ? { uid } : {}) } };
  }

  /** DELETE/EVICT: the leaving pod recorded in its subset's deletingPods. */
  async function release(query: SpreadQuery): Promise<undefined> {
    const { namespace } = query;
    const pod = query.operation === 'EVICT' ? await deps.store.getPod(namespace, query.pod.metadata.name) : query.pod;
    const matched = pod && isPodActive(pod) ? matchedSubsetOf(pod) : undefined;
    if (!pod || !matched) return undefined;
    const found = deps.store.list(namespace).find((ws) => ws.metadata?.name === matched.name);
    if (!found || found.metadata?.deletionTimestamp) return undefined;
    const total = await replicas(found, namespace);
    if (total === undefined) return undefined;
    await serialized(`${namespace}/${matched.name}`, () =>
      write(namespace, found, query.dryRun, (ws) =>
        admitDeletion(ws, pod, matched, total, new Date(deps.now()).toISOString()),
      ),
    );
    return undefined;
  }

  return {
    async assign(query) {
      if (query.operation === 'DELETE' || query.operation === 'EVICT') return release(query);
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
