/**
 * Pods that existed before their WorkloadSpread (or were placed by another one) are matched to a
 * subset by the node they run on, as OpenKruise v1.9's groupPodBySubset and
 * getAndUpdateSuitableSubsetName do: a bound pod on an existing node fits a subset whose required
 * term the node matches and whose tolerations (with the pod's) cover every taint of the node; of
 * the fitting subsets the one scoring highest wins, the first on a tie. The score is 100 × the
 * weights of the subset's preferred terms the node matches, + 10 when the subset's patch would
 * change nothing on the pod, + 1 while the subset still misses pods (limits counted from the pods
 * already placed, then from each pod adopted in turn). The adopted pod gets the
 * matched-workloadspread annotation and the labels and annotations of the subset's patch (unless
 * the WorkloadSpread says workloadspread.kruise.io/ignore-patch-existing-pods-metadata: "true").
 * Pure.
 */
import {
  ANNOTATION_MATCHED_WORKLOADSPREAD,
  ANNOTATION_WORKLOADSPREAD_IGNORE_PATCH_EXISTING,
  type WorkloadSpread,
  type WorkloadSpreadSubset,
} from '@flotilla/api';
import { matchesRequiredAffinity, untoleratedTaint, type NodeLike, type Toleration } from '../../kube/node-fit.js';
import { sameJson } from '../../runtime/kube-object.js';
import { strategicMerge } from './inject.js';
import { isPodActive, matchedSubsetOf, type SpreadPod, subsetLimit } from './subsets.js';

/** The metadata to patch onto an adopted pod. */
export interface PodMetadataPatch {
  labels?: Record<string, string>;
  annotations: Record<string, string>;
}

/** An adopted pod's subset and its metadata patch. */
export interface Adoption {
  subset: string;
  metadata: PodMetadataPatch;
}

type Json = Parameters<typeof strategicMerge>[1];

/** A pod as the subset logic reads it, with the scheduling fields adoption also needs. */
type AdoptablePod = SpreadPod & { spec?: { tolerations?: Toleration[] } };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether a term matches the node (an empty term matches nothing, as in the scheduler). */
function termMatches(term: WorkloadSpreadSubset['requiredNodeSelectorTerm'], node: NodeLike): boolean {
  const spec = {
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term!] } } },
  };
  return matchesRequiredAffinity(spec, node);
}

/** The subset's score for a pod on `node`, or undefined when the pod does not fit the subset. */
function subsetScore(
  pod: AdoptablePod,
  node: NodeLike,
  subset: WorkloadSpreadSubset,
  missing: number,
): number | undefined {
  const tolerations = [...(pod.spec?.tolerations ?? []), ...(subset.tolerations ?? [])];
  if (untoleratedTaint(node, tolerations, ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])) return undefined;
  if (subset.requiredNodeSelectorTerm && !termMatches(subset.requiredNodeSelectorTerm, node)) return undefined;
  const nodeScore = (subset.preferredNodeSelectorTerms ?? [])
    .filter((t) => t.weight !== 0 && termMatches(t.preference, node))
    .reduce((sum, t) => sum + t.weight, 0);
  const patched = subset.patch && sameJson(strategicMerge(pod as unknown as Json, subset.patch as Json), pod) ? 1 : 0;
  return nodeScore * 100 + patched * 10 + (missing > 0 ? 1 : 0);
}

/** The labels and annotations of the subset's patch (when wanted) plus the matched annotation. */
function metadataPatch(ws: WorkloadSpread, subset: WorkloadSpreadSubset): PodMetadataPatch {
  const ignore = ws.metadata?.annotations?.[ANNOTATION_WORKLOADSPREAD_IGNORE_PATCH_EXISTING]?.toLowerCase() === 'true';
  const metadata = !ignore && isRecord(subset.patch) && isRecord(subset.patch.metadata) ? subset.patch.metadata : {};
  const strings = (v: unknown): Record<string, string> =>
    isRecord(v)
      ? Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'))
      : {};
  const labels = strings(metadata.labels);
  const matched = JSON.stringify({ name: ws.metadata?.name ?? '', subset: subset.name });
  return {
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    annotations: { ...strings(metadata.annotations), [ANNOTATION_MATCHED_WORKLOADSPREAD]: matched },
  };
}

/** The fitting subset scoring highest for the pod (the first on a tie), if any fits. */
function favoriteSubset(
  ws: WorkloadSpread,
  pod: AdoptablePod,
  node: NodeLike,
  missing: ReadonlyMap<string, number>,
): { subset: WorkloadSpreadSubset; score: number } | undefined {
  let best: { subset: WorkloadSpreadSubset; score: number } | undefined;
  for (const subset of ws.spec.subsets) {
    const score = subsetScore(pod, node, subset, missing.get(subset.name)!);
    if (score !== undefined && (!best || score > best.score)) best = { subset, score };
  }
  return best;
}

/**
 * The subsets the target's unplaced pods are adopted into, pod name → adoption. `nodeOf` reads a
 * node by name (undefined: it does not exist). Pods already placed by this WorkloadSpread (into a
 * subset it still has or not), terminating pods, unbound pods and pods fitting no subset are left
 * out.
 */
export function adoptPods(
  ws: WorkloadSpread,
  pods: readonly SpreadPod[],
  replicas: number,
  nodeOf: (name: string) => NodeLike | undefined,
): Map<string, Adoption> {
  const name = ws.metadata?.name;
  const missing = new Map(ws.spec.subsets.map((s) => [s.name, subsetLimit(s, replicas) ?? 0]));
  // An unlimited subset always has room.
  for (const [subset, limit] of missing) if (limit === -1) missing.set(subset, Number.MAX_SAFE_INTEGER);
  const placed = (pod: SpreadPod): boolean => {
    const matched = matchedSubsetOf(pod);
    return matched !== undefined && matched.name === name && missing.has(matched.subset);
  };
  for (const pod of pods.filter(placed)) {
    const subset = matchedSubsetOf(pod)!.subset;
    missing.set(subset, missing.get(subset)! - 1);
  }
  const adopted = new Map<string, Adoption>();
  for (const pod of pods as readonly AdoptablePod[]) {
    const node = pod.spec?.nodeName ? nodeOf(pod.spec.nodeName) : undefined;
    // A pod this WorkloadSpread placed keeps its subset, even one since removed from the spec.
    if (matchedSubsetOf(pod)?.name === name || !isPodActive(pod) || !node) continue;
    const best = favoriteSubset(ws, pod, node, missing);
    if (!best) continue;
    missing.set(best.subset.name, missing.get(best.subset.name)! - 1);
    adopted.set(pod.metadata.name, { subset: best.subset.name, metadata: metadataPatch(ws, best.subset) });
  }
  return adopted;
}

/** The pod as it reads once its adoption is patched in. */
export function withAdoption(pod: SpreadPod, adoption: Adoption): SpreadPod {
  const metadata = pod.metadata;
  return {
    ...pod,
    metadata: {
      ...metadata,
      labels: { ...metadata.labels, ...adoption.metadata.labels },
      annotations: { ...metadata.annotations, ...adoption.metadata.annotations },
    },
  };
}
