/**
 * The acting side of PodUnavailableBudget admission, in the thread that talks to the apiserver:
 * reads the pod (evictions name it only) and the budget, lets decision.ts decide, and writes
 * the budget's status when the operation takes from it — one admission per budget at a time in
 * this process, a stale copy answered by the apiserver's 409 and retried on a fresh read (up to
 * four times), as OpenKruise's check-and-decrement does. Dry runs decide without writing. A
 * refusal records a Warning `PubPreventPodDeletion` on the pod. It also reads, for the pod
 * webhook binding a new pod to its budget, which workload the pod's ReplicaSet stands for.
 */
import type { PodUnavailableBudget, PubOperation } from '@flotilla/api';
import { isKubeStatus } from '../../errors.js';
import type { Pod } from '../../kube/types.js';
import type { Clock } from '../../runtime/clock.js';
import { formatTime } from '../../runtime/kube-time.js';
import { groupOf } from '../../runtime/kube-object.js';
import type { ReplicaSetOwnerLookup } from './binding.js';
import type { Workload, WorkloadRef } from './client.js';
import { decidePub, PUB_DENIAL_EVENT, relatedPub } from './decision.js';

/** One guarded operation on a pod, as the admission handler hands it over. */
export interface PubQuery {
  operation: PubOperation;
  namespace: string;
  podName: string;
  /** The pod as the request carries it (DELETE, UPDATE); read from the apiserver when absent (EVICT). */
  pod?: Pod;
  dryRun: boolean;
}

export type PubVerdict = { allowed: true } | { allowed: false; code: number; message: string };

export interface PubGuard {
  admit(query: PubQuery): Promise<PubVerdict>;
  /** The workload a new pod's ReplicaSet stands for, for binding the pod at CREATE (binding.ts). */
  replicaSetWorkload: ReplicaSetOwnerLookup;
}

/** What the guard reads and writes. */
export interface PubStore {
  getPod(namespace: string, name: string): Promise<Pod | undefined>;
  getPub(namespace: string, name: string): Promise<PodUnavailableBudget | undefined>;
  /** Replaces the status; rejects with a 409 KubeApiError when `pub` is stale. */
  updateStatus(pub: PodUnavailableBudget): Promise<PodUnavailableBudget>;
  /** A workload (its controller owner), or undefined when it does not exist. */
  getWorkload(namespace: string, ref: WorkloadRef): Promise<Pick<Workload, 'owner'> | undefined>;
}

export interface PubGuardDeps {
  store: PubStore;
  clock: Clock;
  inPlaceResize: boolean;
  /** Records the refusal on the pod. */
  onDenied(pod: Pod, reason: string, message: string): void;
  /** Attempts at writing the status before giving up (OpenKruise: 4 conflict retries). */
  attempts?: number;
}

export function pubGuard(deps: PubGuardDeps): PubGuard {
  const locks = new Map<string, Promise<unknown>>();
  /** The copy this process last wrote per budget: usually current, so a storm costs no extra reads. */
  const written = new Map<string, PodUnavailableBudget>();
  const attempts = deps.attempts ?? 5;

  const serialized = <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const previous = locks.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => undefined);
    locks.set(key, tail);
    void tail.then(() => {
      if (locks.get(key) === tail) locks.delete(key);
    });
    return next;
  };

  async function decide(query: PubQuery, pod: Pod, pubName: string): Promise<PubVerdict> {
    const key = `${query.namespace}/${pubName}`;
    let cached = written.get(key);
    for (let attempt = 0; attempt < attempts;) {
      const pub = cached ?? (await deps.store.getPub(query.namespace, pubName));
      if (!pub) return { allowed: true };
      const decision = decidePub(pod, pub, query.operation, deps.inPlaceResize, formatTime(deps.clock.now()));
      // Only a write proves the remembered copy current: any other answer is given on a fresh read.
      if (cached && decision.action !== 'take') {
        cached = undefined;
        continue;
      }
      cached = undefined;
      attempt++;
      if (decision.action === 'allow') return { allowed: true };
      if (decision.action === 'deny') {
        deps.onDenied(pod, PUB_DENIAL_EVENT.reason, PUB_DENIAL_EVENT.message);
        return { allowed: false, code: 403, message: decision.message };
      }
      if (query.dryRun) return { allowed: true };
      try {
        written.set(key, await deps.store.updateStatus({ ...pub, status: decision.status }));
        return { allowed: true };
      } catch (err) {
        written.delete(key);
        if (!isKubeStatus(err, 409)) throw err;
      }
    }
    return {
      allowed: false,
      code: 409,
      message: `couldn't update PodUnavailableBudget ${pubName} due to conflicts`,
    };
  }

  return {
    async admit(query) {
      const pod = query.pod ?? (await deps.store.getPod(query.namespace, query.podName));
      const pubName = relatedPub(pod);
      if (!pod || !pubName) return { allowed: true };
      return serialized(`${query.namespace}/${pubName}`, () => decide(query, pod, pubName));
    },
    async replicaSetWorkload(namespace, replicaSet) {
      const found = await deps.store.getWorkload(namespace, replicaSet);
      if (!found) return undefined;
      const owner = found.owner;
      // A Deployment's ReplicaSets are its pods' workload only through it (OpenKruise's controller finder).
      if (owner?.kind === 'Deployment' && groupOf(owner.apiVersion) === 'apps') {
        return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name };
      }
      return replicaSet;
    },
  };
}
