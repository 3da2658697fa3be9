/**
 * Workload and rollout steps over the hub's REST API, and reads of what really runs in the
 * clusters, shared by the demo and the rollout e2e suite.
 */
import { KruiseResources, type Rollout, type RolloutEvent } from '@flotilla/api';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { Fleet } from './fleet.js';

export interface CloneSetWorkload {
  name: string;
  namespace: string;
  replicas: number;
  image: string;
  /** Cluster label selector of the placement. */
  selector: Record<string, string>;
}

export function cloneSetSpec(name: string, replicas: number, image: string): Record<string, unknown> {
  return {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'main', image }] },
    },
    // Everything at once inside a cluster: the fleet's waves are what pace the rollout here.
    updateStrategy: { maxUnavailable: '100%' },
  };
}

/** Creates a CloneSet workload with updatePolicy Rollout (revision 1 goes everywhere at once). */
export async function createCloneSetWorkload(fleet: Fleet, w: CloneSetWorkload): Promise<string> {
  const created = await fleet.api<{ id: string }>('POST', '/workloads', {
    kind: 'CloneSet',
    name: w.name,
    namespace: w.namespace,
    spec: cloneSetSpec(w.name, w.replicas, w.image),
    placement: { clusterSelector: { matchLabels: w.selector } },
    updatePolicy: 'Rollout',
  });
  return created.id;
}

/** A new image makes a new revision; with updatePolicy Rollout no cluster moves yet. */
export async function setImage(fleet: Fleet, id: string, w: CloneSetWorkload, image: string): Promise<number> {
  const updated = await fleet.api<{ revision: number }>('PUT', `/workloads/${id}`, {
    spec: cloneSetSpec(w.name, w.replicas, image),
    placement: { clusterSelector: { matchLabels: w.selector } },
  });
  return updated.revision;
}

export function startRollout(fleet: Fleet, workloadId: string, strategy: unknown): Promise<Rollout> {
  return fleet.api<Rollout>('POST', `/workloads/${workloadId}/rollouts`, { strategy });
}

/**
 * Follows a rollout's server-sent events (history first, then live) until the stream ends, which
 * the hub does once the rollout finished, or until `signal` aborts. Resolves with every event.
 * `hubUrl` picks one hub replica instead of the fleet's address.
 */
export async function followEvents(
  fleet: Fleet,
  rolloutId: string,
  onEvent: (e: RolloutEvent) => void,
  signal?: AbortSignal,
  hubUrl = fleet.hubUrl(),
): Promise<RolloutEvent[]> {
  const seen: RolloutEvent[] = [];
  const res = await fleet.hubFetch(`${hubUrl}/api/v1/rollouts/${rolloutId}/events`, {
    headers: { authorization: `Bearer ${fleet.adminToken}`, accept: 'text/event-stream' },
    ...(signal ? { signal } : {}),
  });
  if (!res.ok || !res.body) throw new Error(`rollout events: HTTP ${res.status}`);
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of res.body) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        if (data === '') continue; // keepalive comment
        const e = JSON.parse(data) as RolloutEvent;
        seen.push(e);
        onEvent(e);
      }
    }
  } catch (err) {
    if (!signal?.aborted) throw err;
  }
  return seen;
}

/** The parts of a CloneSet the demo and the suite look at. */
export interface CloneSetView {
  image: string | undefined;
  partition: number | string | undefined;
  generation: number;
  revisionAnnotation: string | undefined;
  status: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    updatedReplicas?: number;
    updatedReadyReplicas?: number;
  };
}

interface RawCloneSet {
  metadata: { generation: number; annotations?: Record<string, string> };
  spec: {
    template: { spec: { containers: { image: string }[] } };
    updateStrategy?: { partition?: number | string };
  };
  status?: CloneSetView['status'];
}

/** Reads CloneSets of one cluster (undefined when absent). */
export function cloneSetReader(
  kubeconfigPath: string,
): (namespace: string, name: string) => Promise<CloneSetView | undefined> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const api = kc.makeApiClient(CustomObjectsApi);
  const { group, version, plural } = KruiseResources.CloneSet;
  return async (namespace, name) => {
    let cs: RawCloneSet;
    try {
      cs = (await api.getNamespacedCustomObject({ group, version, plural, namespace, name })) as RawCloneSet;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
    return {
      image: cs.spec.template.spec.containers[0]?.image,
      partition: cs.spec.updateStrategy?.partition,
      generation: cs.metadata.generation,
      revisionAnnotation: cs.metadata.annotations?.['flotilla.io/revision'],
      status: cs.status ?? {},
    };
  };
}

/** Every pod of the CloneSet runs `image` and is counted updated and ready. */
export function settledAt(cs: CloneSetView | undefined, image: string, replicas: number): boolean {
  return (
    cs !== undefined &&
    cs.image === image &&
    cs.status.observedGeneration === cs.generation &&
    cs.status.replicas === replicas &&
    cs.status.updatedReplicas === replicas &&
    cs.status.updatedReadyReplicas === replicas
  );
}
