/**
 * Where each workload kind a WorkloadSpread can target lives, and how its replicas, its pods and
 * (for versioned kinds) the version new pods get are read from plain objects.
 */
import { groupOf, type WorkloadSpread } from '@flotilla/api';
import type { ResourceRef } from '../../runtime/resource.js';
import { Resources } from '../../runtime/resource.js';
import { shortHash } from './subsets.js';

const apps = (plural: string, kind: string): ResourceRef => ({
  group: 'apps',
  version: 'v1',
  plural,
  kind,
  namespaced: true,
});

export const Deployments = apps('deployments', 'Deployment');
export const ReplicaSets = apps('replicasets', 'ReplicaSet');
const StatefulSets = apps('statefulsets', 'StatefulSet');
const Jobs: ResourceRef = { group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job', namespaced: true };

/** A target workload as read: its identity, replicas and template revision fields. */
export interface Workload {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    ownerReferences?: { uid: string; controller?: boolean }[];
  };
  spec?: { replicas?: number; parallelism?: number };
  status?: { observedGeneration?: number; updateRevision?: string };
}

/** The resource a targetRef points at; undefined for kinds Flotilla does not spread. */
export function targetResource(ws: WorkloadSpread): ResourceRef | undefined {
  const { apiVersion, kind } = ws.spec.targetRef;
  const group = groupOf(apiVersion);
  if (kind === 'CloneSet' && group === 'apps.kruise.io') return Resources.cloneSets;
  if (group !== 'apps' && !(group === 'batch' && kind === 'Job')) return undefined;
  return { Deployment: Deployments, ReplicaSet: ReplicaSets, StatefulSet: StatefulSets, Job: Jobs }[kind];
}

/** A CloneSet's update revision (short hash) once its controller has seen the latest spec. */
export function cloneSetLatestVersion(cloneSet: Workload): string | undefined {
  const revision = cloneSet.status?.updateRevision;
  const observed = cloneSet.status?.observedGeneration ?? 0;
  if (!revision || observed < (cloneSet.metadata.generation ?? 0)) return undefined;
  return shortHash(revision);
}

/** spec.replicas (a Job's parallelism), defaulting to 1 as the apiserver does. */
export function replicasOf(kind: string, workload: Workload): number {
  return (kind === 'Job' ? workload.spec?.parallelism : workload.spec?.replicas) ?? 1;
}

const REVISION = 'deployment.kubernetes.io/revision';

/** A Deployment's newest ReplicaSet (same revision annotation) gives the version new pods get. */
export function deploymentLatestVersion(deployment: Workload, replicaSets: readonly Workload[]): string | undefined {
  const revision = deployment.metadata.annotations?.[REVISION];
  if (revision === undefined) return undefined;
  const newest = replicaSets.find((rs) => rs.metadata.annotations?.[REVISION] === revision);
  return newest?.metadata.labels?.['pod-template-hash'];
}
