/**
 * Workload dependencies: a workload may depend on others, and in each cluster of its rollouts a
 * cluster starts only once every workload it depends on is healthy there at the revision the hub
 * sent. Checked when a workload is written: each reference names a live workload other than
 * itself, and the dependencies form no cycle (a cycle would hold every member forever). Pure.
 */
import type { WorkloadKind, WorkloadRef } from '@flotilla/api';

export interface GraphNode {
  id: string;
  kind: WorkloadKind;
  namespace: string;
  name: string;
  dependsOn: readonly Required<WorkloadRef>[];
}

/** `kind namespace/name` (or `kind name` when cluster-scoped), as messages and keys show it. */
export function refLabel(ref: Required<WorkloadRef>): string {
  return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
}

const keyOf = (r: { kind: string; namespace: string; name: string }): string => `${r.kind}|${r.namespace}|${r.name}`;

/** Fills in the dependent's namespace where a reference leaves it out. */
export function normalizeRefs(refs: readonly WorkloadRef[] | undefined, namespace: string): Required<WorkloadRef>[] {
  return (refs ?? []).map((r) => ({ kind: r.kind, name: r.name, namespace: r.namespace ?? namespace }));
}

/** A problem with one reference (`index`) or with the set as a whole (a cycle). */
export interface DependencyProblem {
  field: string;
  message: string;
}

/**
 * Checks `self`'s new dependencies against the live workloads (`graph` holds every live one, with
 * `self`'s old dependencies if it exists). Returns the first problem, or undefined.
 */
export function checkDependencies(
  self: { kind: WorkloadKind; namespace: string; name: string },
  refs: readonly Required<WorkloadRef>[],
  graph: readonly GraphNode[],
): DependencyProblem | undefined {
  const byKey = new Map(graph.map((n) => [keyOf(n), n]));
  const seen = new Set<string>();
  for (const [i, ref] of refs.entries()) {
    const field = `dependsOn[${i}]`;
    const key = keyOf(ref);
    if (key === keyOf(self)) return { field, message: 'a workload cannot depend on itself' };
    if (seen.has(key)) return { field, message: `${refLabel(ref)} is listed twice` };
    seen.add(key);
    if (!byKey.has(key)) return { field, message: `no live workload ${refLabel(ref)}` };
  }
  // With self's edges replaced, a path from any dependency back to self is a cycle.
  const edges = new Map(graph.map((n) => [keyOf(n), n.dependsOn.map(keyOf)]));
  edges.set(keyOf(self), refs.map(keyOf));
  const path = pathTo(keyOf(self), refs.map(keyOf), edges);
  if (path) {
    const names = [keyOf(self), ...path].map((k) => k.split('|').slice(1).filter(Boolean).join('/'));
    return { field: 'dependsOn', message: `the dependencies form a cycle: ${names.join(' → ')}` };
  }
  return undefined;
}

/** A path from one of `starts` to `target` along `edges` (depth first), or undefined. */
function pathTo(
  target: string,
  starts: readonly string[],
  edges: ReadonlyMap<string, readonly string[]>,
): string[] | undefined {
  const visited = new Set<string>();
  const walk = (node: string, trail: string[]): string[] | undefined => {
    if (node === target) return [...trail, node];
    if (visited.has(node)) return undefined;
    visited.add(node);
    for (const next of edges.get(node) ?? []) {
      const found = walk(next, [...trail, node]);
      if (found) return found;
    }
    return undefined;
  };
  for (const s of starts) {
    const found = walk(s, []);
    if (found) return found;
  }
  return undefined;
}

/** Live workloads that depend on `self` (its deletion would leave them waiting for nothing). */
export function dependentsOf(
  self: { kind: string; namespace: string; name: string },
  graph: readonly GraphNode[],
): GraphNode[] {
  const key = keyOf(self);
  return graph.filter((n) => n.dependsOn.some((r) => keyOf(r) === key));
}
