/**
 * An in-memory CloneSetClient that records every call, for unit tests of the actors. Failures
 * are injected per call with `failWhen`.
 */
import { sleep, type CloneSetStatus } from '@flotilla/api';
import { KubeApiError } from '../../../errors.js';
import type { CloneSetClient } from '../client.js';
import type { ResizePatch } from '../inplace-resources.js';
import type { ControllerRevision, PersistentVolumeClaim, Pod, PodCondition } from '../../../kube/types.js';
import type { CloneSet } from '../types.js';

export interface Call {
  op: string;
  name: string;
  body?: unknown;
}

export class FakeClient implements CloneSetClient {
  readonly calls: Call[] = [];
  /** In flight at once, at the worst moment. */
  maxInFlight = 0;
  #inFlight = 0;
  #rv = 100;
  failWhen: (call: Call) => Error | undefined = () => undefined;

  async #record<T>(call: Call, result: () => T): Promise<T> {
    this.calls.push(call);
    this.#inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.#inFlight);
    await sleep(1);
    this.#inFlight--;
    const err = this.failWhen(call);
    if (err) throw err;
    return result();
  }

  #stamp<T extends { metadata?: { resourceVersion?: string; uid?: string } }>(obj: T): T {
    const copy = structuredClone(obj);
    copy.metadata = {
      ...copy.metadata,
      resourceVersion: String(++this.#rv),
      uid: copy.metadata?.uid ?? `uid-${this.#rv}`,
    };
    return copy;
  }

  ops(op?: string): string[] {
    return this.calls.filter((c) => op === undefined || c.op === op).map((c) => `${c.op} ${c.name}`);
  }

  createPod = (pod: Pod): Promise<void> =>
    this.#record({ op: 'createPod', name: pod.metadata.name, body: pod }, () => undefined);
  getPod = (_ns: string, name: string): Promise<Pod> =>
    this.#record({ op: 'getPod', name }, () => ({ metadata: { name }, spec: { containers: [] } }));
  updatePod = (pod: Pod): Promise<Pod> =>
    this.#record({ op: 'updatePod', name: pod.metadata.name, body: pod }, () => this.#stamp(pod));
  patchPodMetadata = (pod: Pod, metadata: Record<string, unknown>): Promise<Pod> =>
    this.#record({ op: 'patchPodMetadata', name: pod.metadata.name, body: metadata }, () => this.#stamp(pod));
  /** What serverVersion() answers. */
  gitVersion = 'v1.36.3';
  resizePod = (pod: Pod, patch: ResizePatch): Promise<Pod> =>
    this.#record({ op: 'resizePod', name: pod.metadata.name, body: patch }, () => {
      const resized = this.#stamp(pod);
      for (const { name, resources } of patch.spec.containers) {
        const c = resized.spec.containers.find((x) => x.name === name);
        if (!c) continue;
        c.resources = {
          limits: { ...c.resources?.limits, ...resources.limits },
          requests: { ...c.resources?.requests, ...resources.requests },
        };
      }
      return resized;
    });
  serverVersion = (): Promise<string> => this.#record({ op: 'serverVersion', name: '' }, () => this.gitVersion);
  patchPodConditions = (pod: Pod, conditions: PodCondition[]): Promise<Pod> =>
    this.#record({ op: 'patchPodConditions', name: pod.metadata.name, body: conditions }, () => this.#stamp(pod));
  deletePod = (pod: Pod): Promise<boolean> => this.#record({ op: 'deletePod', name: pod.metadata.name }, () => true);
  createClaim = (claim: PersistentVolumeClaim): Promise<PersistentVolumeClaim> =>
    this.#record({ op: 'createClaim', name: claim.metadata.name, body: claim }, () => this.#stamp(claim));
  updateClaim = (claim: PersistentVolumeClaim): Promise<PersistentVolumeClaim> =>
    this.#record({ op: 'updateClaim', name: claim.metadata.name, body: claim }, () => this.#stamp(claim));
  deleteClaim = (claim: PersistentVolumeClaim): Promise<boolean> =>
    this.#record({ op: 'deleteClaim', name: claim.metadata.name }, () => true);
  createRevision = (revision: ControllerRevision): Promise<ControllerRevision> =>
    this.#record({ op: 'createRevision', name: revision.metadata.name, body: revision }, () => this.#stamp(revision));
  getRevision = (_ns: string, name: string): Promise<ControllerRevision> =>
    this.#record({ op: 'getRevision', name }, () => {
      throw new KubeApiError(404, `revision ${name} not found`);
    });
  updateRevision = (revision: ControllerRevision): Promise<ControllerRevision> =>
    this.#record({ op: 'updateRevision', name: revision.metadata.name, body: revision }, () => this.#stamp(revision));
  deleteRevision = (revision: ControllerRevision): Promise<boolean> =>
    this.#record({ op: 'deleteRevision', name: revision.metadata.name }, () => true);
  getCloneSet = (_ns: string, name: string): Promise<CloneSet> =>
    this.#record({ op: 'getCloneSet', name }, () => ({ metadata: { name } }) as CloneSet);
  updateStatus = (cs: CloneSet, status: CloneSetStatus): Promise<CloneSet> =>
    this.#record({ op: 'updateStatus', name: cs.metadata?.name ?? '', body: status }, () =>
      this.#stamp({ ...cs, status }),
    );
  setPodsToDelete = (cs: CloneSet, names: string[]): Promise<CloneSet> =>
    this.#record({ op: 'setPodsToDelete', name: cs.metadata?.name ?? '', body: names }, () => this.#stamp(cs));
}
