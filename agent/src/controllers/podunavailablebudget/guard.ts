/**
 * The acting side of PodUnavailableBudget admission, in the thread that talks to the apiserver:
 * reads the pod (evictions name it only) and the budget, lets decision.ts decide, and writes
 * the budget's status when the operation takes from it. As OpenKruise's check-and-decrement, a
 * stale copy is answered by the apiserver's 409 and decided again on a fresh read (up to four
 * times); unlike it, admissions arriving while a budget's write is in flight wait and are then
 * decided together, in arrival order, and paid for by one status write — so a storm costs one
 * write per round trip instead of one per pod, and none is answered before its record is
 * stored. Dry runs decide without writing. A refusal records a Warning `PubPreventPodDeletion`
 * on the pod. It also reads, for the pod webhook binding a new pod to its budget, which
 * workload the pod's ReplicaSet stands for.
 */
import type { PodUnavailableBudget, PubOperation } from '@flotilla/api';
import { isKubeStatus } from '../../errors.js';
import type { Pod } from '../../kube/types.js';
import type { Clock } from '../../runtime/clock.js';
import { formatTime } from '../../runtime/kube-time.js';
import { groupOf } from '../../runtime/kube-object.js';
import type { ReplicaSetOwnerLookup } from './binding.js';
import type { Workload, WorkloadRef } from './client.js';
import { decideBatch, isRecorded, PUB_DENIAL_EVENT, relatedPub, type PubDecision } from './decision.js';

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
  /** Admissions settled by one status write at most (default 100). */
  maxBatch?: number;
}

const DEFAULT_MAX_BATCH = 100;

/** An admission waiting for its budget. */
interface Waiting {
  query: PubQuery;
  pod: Pod;
  resolve(verdict: PubVerdict): void;
  reject(err: unknown): void;
}

export function pubGuard(deps: PubGuardDeps): PubGuard {
  /** Admissions waiting for their budget, per budget; one batch per budget is settled at a time. */
  const waiting = new Map<string, Waiting[]>();
  /** The copy this process last wrote per budget: usually current, so a storm costs no extra reads. */
  const written = new Map<string, PodUnavailableBudget>();
  const attempts = deps.attempts ?? 5;
  const maxBatch = deps.maxBatch ?? DEFAULT_MAX_BATCH;

  const answer = (w: Waiting, decision: PubDecision): void => {
    if (decision.action === 'deny') {
      deps.onDenied(w.pod, PUB_DENIAL_EVENT.reason, PUB_DENIAL_EVENT.message);
      w.resolve({ allowed: false, code: 403, message: decision.message });
    } else {
      w.resolve({ allowed: true });
    }
  };

  /** Decides a batch against the budget and writes what the admitted ones took, in one status write. */
  async function settle(namespace: string, pubName: string, batch: Waiting[]): Promise<void> {
    const key = `${namespace}/${pubName}`;
    let cached = written.get(key);
    let open = batch;
    for (let attempt = 0; attempt < attempts;) {
      const pub = cached ?? (await deps.store.getPub(namespace, pubName));
      if (!pub) return open.forEach((w) => w.resolve({ allowed: true }));
      const now = formatTime(deps.clock.now());
      const round = decideBatch(pub, open, deps.inPlaceResize, now);
      // Only a write proves the remembered copy current: any other answer is given on a fresh read,
      // but for a pod the copy records (that admission was paid for whatever happened since).
      const unproven = (d: PubDecision, i: number): boolean =>
        d.action !== 'take' && !isRecorded(cached?.status, open[i]!.pod.metadata.name);
      if (cached && round.decisions.some(unproven)) {
        cached = undefined;
        continue;
      }
      cached = undefined;
      attempt++;
      const takers: Waiting[] = [];
      round.decisions.forEach((d, i) => {
        if (d.action === 'take' && !open[i]!.query.dryRun) takers.push(open[i]!);
        else answer(open[i]!, d);
      });
      if (takers.length === 0) return;
      try {
        written.set(key, await deps.store.updateStatus({ ...pub, status: round.status }));
        return takers.forEach((w) => w.resolve({ allowed: true }));
      } catch (err) {
        written.delete(key);
        if (!isKubeStatus(err, 409)) return takers.forEach((w) => w.reject(err));
        open = takers;
      }
    }
    const message = `couldn't update PodUnavailableBudget ${pubName} due to conflicts`;
    open.forEach((w) => w.resolve({ allowed: false, code: 409, message }));
  }

  async function drain(namespace: string, pubName: string, queue: Waiting[]): Promise<void> {
    const key = `${namespace}/${pubName}`;
    while (queue.length > 0) {
      const batch = queue.splice(0, maxBatch);
      await settle(namespace, pubName, batch).catch((err: unknown) => batch.forEach((w) => w.reject(err)));
    }
    waiting.delete(key);
  }

  return {
    async admit(query) {
      const pod = query.pod ?? (await deps.store.getPod(query.namespace, query.podName));
      const pubName = relatedPub(pod);
      if (!pod || !pubName) return { allowed: true };
      const key = `${query.namespace}/${pubName}`;
      // A pod this process already paid for (the apiserver asks again for one deletion) waits for nothing.
      if (isRecorded(written.get(key)?.status, pod.metadata.name)) return { allowed: true };
      return new Promise<PubVerdict>((resolve, reject) => {
        const queue = waiting.get(key);
        if (queue) return void queue.push({ query, pod, resolve, reject });
        const fresh: Waiting[] = [{ query, pod, resolve, reject }];
        waiting.set(key, fresh);
        void drain(query.namespace, pubName, fresh);
      });
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
