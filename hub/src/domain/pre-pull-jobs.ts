/**
 * The ImagePullJobs that pre-pull a rollout's target revision on one cluster (strategy.prePull),
 * and how the rollout's desired rows of them change. One job per distinct image of the manifest
 * the cluster will get (containers and initContainers, overrides applied), on the nodes the
 * workload's pods may land on, as far as an ImagePullJob selector can say it:
 * - `nodeSelector` becomes `selector.matchLabels`;
 * - required node affinity with a single term whose expressions use In, NotIn, Exists or
 *   DoesNotExist becomes `selector.matchExpressions`;
 * - what a label selector cannot say (several terms, which are ORed; Gt/Lt; matchFields) is left
 *   out, so the job pulls on more nodes than needed, never on fewer.
 * The jobs are owned by the rollout: their desired rows carry the rollout id where a workload's
 * carry the workload id; they carry the workload's labels. Pure.
 */
import {
  CLUSTER_ANNOTATION,
  KRUISE_API_VERSION,
  MANAGED_BY_HUB,
  MANAGED_BY_LABEL,
  REVISION_ANNOTATION,
  WORKLOAD_ANNOTATION,
} from '@flotilla/api';
import { contentHash } from './canonical-json.js';
import type { CurrentDesired, DesiredChange } from './desired-plan.js';
import { TOMBSTONE_HASH } from './desired-plan.js';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objAt = (o: unknown, key: string): Obj => (isObj(o) && isObj(o[key]) ? o[key] : {});
const listAt = (o: unknown, key: string): unknown[] => (isObj(o) && Array.isArray(o[key]) ? o[key] : []);

/** The distinct images of a pod template spec, containers before initContainers, in order. */
export function templateImages(podSpec: Obj): string[] {
  const images = [...listAt(podSpec, 'containers'), ...listAt(podSpec, 'initContainers')]
    .map((c) => (isObj(c) ? c.image : undefined))
    .filter((i): i is string => typeof i === 'string' && i !== '');
  return [...new Set(images)];
}

const LABEL_OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

/** The node selector of an ImagePullJob for pods of this template (see the file comment). */
export function nodeSelectorOf(podSpec: Obj): Obj | undefined {
  const matchLabels = objAt(podSpec, 'nodeSelector');
  const required = objAt(
    objAt(objAt(podSpec, 'affinity'), 'nodeAffinity'),
    'requiredDuringSchedulingIgnoredDuringExecution',
  );
  const terms = listAt(required, 'nodeSelectorTerms');
  const matchExpressions =
    terms.length === 1
      ? listAt(terms[0], 'matchExpressions').filter((e) => isObj(e) && LABEL_OPERATORS.has(String(e.operator)))
      : [];
  const selector: Obj = {
    ...(Object.keys(matchLabels).length > 0 ? { matchLabels } : {}),
    ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
  };
  return Object.keys(selector).length > 0 ? selector : undefined;
}

/** What a cluster's pre-pull jobs are made from. */
export interface PrePullSource {
  rolloutId: string;
  /** The workload's manifest for that cluster at the target revision (renderManifest). */
  manifest: Obj;
  revision: number;
  cluster: string;
}

/** Job names: short, stable for (rollout, image), unlikely to meet a workload's own. */
function jobName(workloadName: string, rolloutId: string, image: string): string {
  const base = workloadName.slice(0, 40).replace(/-+$/, '');
  return `${base}-prepull-${contentHash(`${rolloutId}/${image}`).slice(0, 10)}`;
}

/** The ImagePullJobs for one cluster; none for a kind without a pod template. */
export function prePullJobs(src: PrePullSource): Obj[] {
  const meta = objAt(src.manifest, 'metadata');
  const podSpec = objAt(objAt(objAt(src.manifest, 'spec'), 'template'), 'spec');
  const selector = nodeSelectorOf(podSpec);
  const pullSecrets = listAt(podSpec, 'imagePullSecrets').flatMap((s) =>
    isObj(s) && typeof s.name === 'string' ? [s.name] : [],
  );
  return templateImages(podSpec).map((image) => ({
    apiVersion: KRUISE_API_VERSION,
    kind: 'ImagePullJob',
    metadata: {
      name: jobName(typeof meta.name === 'string' ? meta.name : 'workload', src.rolloutId, image),
      namespace: typeof meta.namespace === 'string' ? meta.namespace : 'default',
      // The workload's labels too: label-scoped agents and operators' selectors see the jobs with it.
      labels: { ...objAt(meta, 'labels'), [MANAGED_BY_LABEL]: MANAGED_BY_HUB },
      annotations: {
        [WORKLOAD_ANNOTATION]: src.rolloutId,
        [REVISION_ANNOTATION]: String(src.revision),
        [CLUSTER_ANNOTATION]: src.cluster,
      },
    },
    spec: {
      image,
      ...(selector ? { selector } : {}),
      ...(pullSecrets.length > 0 ? { pullSecrets } : {}),
      completionPolicy: { type: 'Always' },
    },
  }));
}

/** A pre-pull job's row: which object in which cluster. */
export interface PrePullKey {
  cluster: string;
  namespace: string;
  name: string;
}

export const prePullKey = (k: PrePullKey): string => `${k.cluster}/${k.namespace}/${k.name}`;

/** One object's changed rows (upsertDesired writes one object at a time). */
export interface PrePullChanges {
  namespace: string;
  name: string;
  changes: DesiredChange[];
}

/**
 * How the rollout's rows change to hold exactly `wanted` (by prePullKey): new or changed jobs
 * get the next generation, jobs no longer wanted a tombstone; grouped by object, in key order.
 */
export function planPrePull(
  wanted: ReadonlyMap<string, { key: PrePullKey; manifest: Obj }>,
  current: ReadonlyMap<string, { key: PrePullKey; row: CurrentDesired }>,
  revision: number,
): PrePullChanges[] {
  const byObject = new Map<string, PrePullChanges>();
  const add = (key: PrePullKey, change: DesiredChange): void => {
    const id = `${key.namespace}/${key.name}`;
    const group = byObject.get(id) ?? { namespace: key.namespace, name: key.name, changes: [] };
    group.changes.push(change);
    byObject.set(id, group);
  };
  for (const [k, { key, manifest }] of [...wanted].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const row = current.get(k)?.row;
    const manifestHash = contentHash(manifest);
    if (row && !row.deleted && row.manifestHash === manifestHash) continue;
    const generation = (row?.generation ?? 0) + 1;
    add(key, { cluster: key.cluster, generation, revision, deleted: false, manifest, manifestHash });
  }
  for (const [k, { key, row }] of [...current].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (row.deleted || wanted.has(k)) continue;
    const change = { generation: row.generation + 1, deleted: true, manifest: null, manifestHash: TOMBSTONE_HASH };
    add(key, { cluster: key.cluster, revision, ...change });
  }
  return [...byObject.values()];
}
