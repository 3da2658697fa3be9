/**
 * Puts a pod into a subset at admission, as OpenKruise v1.9's injectWorkloadSpreadIntoPod: the
 * subset's tolerations appended, its preferred terms appended, its required term added to every
 * required node selector term of the pod (or as the only one), its patch merged strategically,
 * and the matched-workloadspread annotation written.
 */
import { ANNOTATION_MATCHED_WORKLOADSPREAD, type WorkloadSpreadSubset } from '@flotilla/api';
import type { MatchedSubset } from './subsets.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Kubernetes' strategic merge for a pod, for the lists a subset patch touches: lists of objects
 * with a `name` (containers, volumes, env, ports...) merge element by element on the name; other
 * lists are replaced; null removes a field.
 */
export function strategicMerge(target: Json | undefined, patch: Json): Json {
  if (isObject(patch)) {
    const base: JsonObject = isObject(target) ? { ...target } : {};
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete base[key];
      else base[key] = strategicMerge(base[key], value);
    }
    return base;
  }
  if (Array.isArray(patch) && Array.isArray(target) && patch.every((e) => isObject(e) && typeof e.name === 'string')) {
    const merged = [...target];
    for (const element of patch as JsonObject[]) {
      const at = merged.findIndex((e) => isObject(e) && e.name === element.name);
      if (at < 0) merged.push(element);
      else merged[at] = strategicMerge(merged[at], element);
    }
    return merged;
  }
  return structuredClone(patch);
}

interface PodShape {
  metadata?: { annotations?: Record<string, string>; [key: string]: unknown };
  spec?: {
    tolerations?: unknown[];
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: {
          nodeSelectorTerms?: { matchExpressions?: unknown[]; matchFields?: unknown[] }[];
        };
        preferredDuringSchedulingIgnoredDuringExecution?: unknown[];
        [key: string]: unknown;
      };
      [key: string]: unknown;
    };
    priorityClassName?: string;
    priority?: number;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

type PodSpecShape = NonNullable<PodShape['spec']>;

/** The subset's preferred terms appended; its required term added to each pod term, or the only one. */
function addNodeAffinity(spec: PodSpecShape, subset: WorkloadSpreadSubset): void {
  const nodeAffinity = ((spec.affinity ??= {}).nodeAffinity ??= {});
  if (subset.preferredNodeSelectorTerms?.length) {
    nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution = [
      ...(nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution ?? []),
      ...subset.preferredNodeSelectorTerms,
    ];
  }
  const required = subset.requiredNodeSelectorTerm;
  if (!required) return;
  const selector = (nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution ??= {});
  const terms = selector.nodeSelectorTerms ?? [];
  selector.nodeSelectorTerms =
    terms.length === 0
      ? [structuredClone(required)]
      : terms.map((term) => ({
          ...term,
          matchExpressions: [...(term.matchExpressions ?? []), ...(required.matchExpressions ?? [])],
          matchFields: [...(term.matchFields ?? []), ...(required.matchFields ?? [])],
        }));
}

/** The subset's patch merged in; a changed priority class drops the priority admission filled in. */
function applyPatch(pod: PodShape, patch: object): PodShape {
  const before = pod.spec?.priorityClassName;
  const out = strategicMerge(pod as JsonObject, patch as JsonObject) as PodShape;
  if (out.spec?.priorityClassName !== before) delete out.spec?.priority;
  return out;
}

/** A copy of `pod` placed into `subset`, annotated with `matched`. */
export function injectSubset<P extends object>(pod: P, subset: WorkloadSpreadSubset, matched: MatchedSubset): P {
  let out = structuredClone(pod) as PodShape;
  const spec = (out.spec ??= {});
  if (subset.tolerations?.length) spec.tolerations = [...(spec.tolerations ?? []), ...subset.tolerations];
  addNodeAffinity(spec, subset);
  if (subset.patch) out = applyPatch(out, subset.patch);
  const metadata = (out.metadata ??= {});
  const annotation = { name: matched.name, subset: matched.subset, ...(matched.uid ? { uid: matched.uid } : {}) };
  metadata.annotations = { ...metadata.annotations, [ANNOTATION_MATCHED_WORKLOADSPREAD]: JSON.stringify(annotation) };
  return out as P;
}
