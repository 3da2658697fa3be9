/**
 * Builders for unit tests of the CloneSet planner: a defaulted CloneSet and pods in any state,
 * with a fixed clock. Only used by *.test.ts files.
 */
import {
  CONDITION_INPLACE_UPDATE_READY,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_LIFECYCLE_STATE,
  LABEL_SPECIFIED_DELETE,
  defaultCloneSet,
  type CloneSetSpec,
} from '@flotilla/api';
import { formatTime } from '../../../runtime/kube-time.js';
import type { Pod, PodCondition } from '../../../kube/types.js';
import type { CloneSet } from '../types.js';

/** The tests' "now": 2026-01-01T00:10:00Z. */
export const NOW = Date.parse('2026-01-01T00:10:00Z');

/** `seconds` before NOW, as an RFC 3339 time. */
export function ago(seconds: number): string {
  return formatTime(NOW - seconds * 1000);
}

export type SpecPatch = Partial<Omit<CloneSetSpec, 'template' | 'selector'>> & Pick<Partial<CloneSetSpec>, 'template'>;

/** A defaulted CloneSet `ns/cs` selecting app=web, one container `main` at image v1. */
export function cloneSet(spec: SpecPatch = {}, labels?: Record<string, string>): CloneSet {
  return defaultCloneSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'cs', namespace: 'ns', uid: 'cs-uid', generation: 1, ...(labels ? { labels } : {}) },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }] },
      },
      ...spec,
    },
  });
}

export interface PodOptions {
  name?: string;
  revision?: string;
  state?: string;
  /** Ready condition True (and phase Running). Default true. */
  ready?: boolean;
  /** Seconds ago the pod became ready; default 600. */
  readySince?: number;
  phase?: string;
  node?: string;
  specifiedDelete?: boolean;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  /** Seconds ago the pod was created; default 900. */
  createdAgo?: number;
  restarts?: number;
  inPlaceReady?: boolean;
  conditions?: PodCondition[];
  uid?: string;
}

let counter = 0;

/** A pod of the CloneSet in the given state. */
export function pod(options: PodOptions = {}): Pod {
  const name = options.name ?? `cs-p${++counter}`;
  const ready = options.ready ?? true;
  const conditions: PodCondition[] = [
    { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: ago(options.readySince ?? 600) },
    { type: 'ContainersReady', status: ready ? 'True' : 'False' },
    ...(options.inPlaceReady === undefined
      ? []
      : [{ type: CONDITION_INPLACE_UPDATE_READY, status: options.inPlaceReady ? 'True' : 'False' }]),
    ...(options.conditions ?? []),
  ];
  const labels: Record<string, string> = { app: 'web', ...(options.labels ?? {}) };
  if (options.revision !== undefined) labels[LABEL_CONTROLLER_REVISION_HASH] = options.revision;
  if (options.state !== undefined) labels[LABEL_LIFECYCLE_STATE] = options.state;
  if (options.specifiedDelete) labels[LABEL_SPECIFIED_DELETE] = 'true';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'ns',
      uid: options.uid ?? `${name}-uid`,
      labels,
      ...(options.annotations ? { annotations: options.annotations } : {}),
      ...(options.finalizers ? { finalizers: options.finalizers } : {}),
      creationTimestamp: ago(options.createdAgo ?? 900),
    },
    spec: {
      containers: [{ name: 'main', image: 'registry.local/app:v1' }],
      ...(options.node === undefined ? { nodeName: 'node-1' } : options.node ? { nodeName: options.node } : {}),
    },
    status: {
      phase: options.phase ?? (ready ? 'Running' : 'Pending'),
      conditions,
      containerStatuses: [{ name: 'main', ready, restartCount: options.restarts ?? 0 }],
    },
  };
}
