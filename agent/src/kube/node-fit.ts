/**
 * Whether a pod fits a node, by the scheduler predicates OpenKruise's node-placing controllers run.
 * nodeFit is the BroadcastJob's (checkNodeFitness in pkg/controller/broadcastjob): the pod's
 * nodeName, its required node affinity (nodeSelector and requiredDuringScheduling terms), the
 * node's NoSchedule/NoExecute taints it does not tolerate, an unschedulable node, and requests
 * beyond the node's allocatable (against the node alone, not the pods already on it, as OpenKruise
 * does). The Advanced DaemonSet uses the affinity and taint parts alone (matchesRequiredAffinity,
 * untoleratedTaint). Pure.
 */
import { parseQuantityMilli } from '@flotilla/api';

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface NodeLike {
  metadata?: { name?: string; labels?: Record<string, string> };
  spec?: { taints?: Taint[]; unschedulable?: boolean };
  status?: { allocatable?: Record<string, string | number> };
}

/** The parts of a pod spec the predicates read. */
export interface SchedulingSpec {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  affinity?: {
    nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] } };
  };
  tolerations?: Toleration[];
  containers?: { resources?: { requests?: Record<string, string | number> } }[];
  initContainers?: { resources?: { requests?: Record<string, string | number> } }[];
  overhead?: Record<string, string | number>;
}

export type Fit = { fits: true } | { fits: false; reason: string };

const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';

/** The first predicate the pod fails on the node, or fits. */
export function nodeFit(spec: SchedulingSpec, node: NodeLike): Fit {
  const name = node.metadata?.name ?? '';
  if (spec.nodeName && spec.nodeName !== name)
    return { fits: false, reason: "node(s) didn't match the requested node name" };
  if (!matchesRequiredAffinity(spec, node)) {
    return { fits: false, reason: "node(s) didn't match Pod's node affinity/selector" };
  }
  const tolerations = spec.tolerations ?? [];
  const taint = untoleratedTaint(node, tolerations, ['NoSchedule', 'NoExecute']);
  if (taint)
    return {
      fits: false,
      reason: `node(s) had taint {${taint.key}: ${taint.value ?? ''}}, that the pod didn't tolerate`,
    };
  const unschedulable: Taint = { key: UNSCHEDULABLE_TAINT, effect: 'NoSchedule' };
  if (node.spec?.unschedulable && !tolerations.some((tol) => tolerates(tol, unschedulable))) {
    return { fits: false, reason: 'node(s) were unschedulable' };
  }
  const short = insufficientResources(spec, node);
  return short.length === 0
    ? { fits: true }
    : { fits: false, reason: short.map((r) => `Insufficient ${r}`).join(', ') };
}

/** v1helper.TolerationsTolerateTaint for one toleration. */
export function tolerates(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  if (toleration.operator === 'Exists') return true;
  if (!toleration.operator || toleration.operator === 'Equal') {
    return Boolean(toleration.key) && (toleration.value ?? '') === (taint.value ?? '');
  }
  return false;
}

/** The node's first taint with one of these effects that no toleration tolerates. */
export function untoleratedTaint(
  node: NodeLike,
  tolerations: readonly Toleration[],
  effects: readonly string[],
): Taint | undefined {
  return (node.spec?.taints ?? []).find(
    (t) => effects.includes(t.effect) && !tolerations.some((tol) => tolerates(tol, t)),
  );
}

/** nodeSelector labels all present, and (when terms are given) one term matching. */
export function matchesRequiredAffinity(spec: SchedulingSpec, node: NodeLike): boolean {
  const labels = node.metadata?.labels ?? {};
  if (!Object.entries(spec.nodeSelector ?? {}).every(([k, v]) => labels[k] === v)) return false;
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms === undefined) return true;
  const fields = { 'metadata.name': node.metadata?.name ?? '' };
  return terms.some((term) => termMatches(term, labels, fields));
}

/** A term with neither expressions nor fields matches nothing, as in the scheduler. */
function termMatches(term: NodeSelectorTerm, labels: Record<string, string>, fields: Record<string, string>): boolean {
  const expressions = term.matchExpressions ?? [];
  const matchFields = term.matchFields ?? [];
  if (expressions.length === 0 && matchFields.length === 0) return false;
  return (
    expressions.every((r) => requirementMatches(r, labels)) && matchFields.every((r) => requirementMatches(r, fields))
  );
}

function requirementMatches(req: NodeSelectorRequirement, values: Record<string, string>): boolean {
  const present = Object.prototype.hasOwnProperty.call(values, req.key);
  const value = values[req.key] ?? '';
  const listed = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return present && listed.includes(value);
    case 'NotIn':
      return !present || !listed.includes(value);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
    case 'Gt':
    case 'Lt': {
      const bound = Number(listed[0]);
      const actual = Number(value);
      if (!present || !Number.isInteger(bound) || !Number.isInteger(actual)) return false;
      return req.operator === 'Gt' ? actual > bound : actual < bound;
    }
    default:
      return false;
  }
}

type Requests = Map<string, bigint>;

function milli(value: string | number | undefined): bigint {
  return parseQuantityMilli(String(value ?? 0))?.milli ?? 0n;
}

function addInto(into: Requests, requests: Record<string, string | number> | undefined): void {
  for (const [name, value] of Object.entries(requests ?? {})) into.set(name, (into.get(name) ?? 0n) + milli(value));
}

/** The pod's effective requests: the containers' sum or the largest init container, plus overhead. */
function podRequests(spec: SchedulingSpec): Requests {
  const total: Requests = new Map();
  for (const c of spec.containers ?? []) addInto(total, c.resources?.requests);
  for (const c of spec.initContainers ?? []) {
    for (const [name, value] of Object.entries(c.resources?.requests ?? {})) {
      const m = milli(value);
      if (m > (total.get(name) ?? 0n)) total.set(name, m);
    }
  }
  addInto(total, spec.overhead);
  return total;
}

/** Resources the pod requests beyond what the node can allocate (none allocatable: zero). */
function insufficientResources(spec: SchedulingSpec, node: NodeLike): string[] {
  const allocatable = node.status?.allocatable ?? {};
  const short: string[] = [];
  if (allocatable.pods !== undefined && milli(allocatable.pods) < 1000n) short.push('pods');
  for (const [name, requested] of podRequests(spec)) {
    if (requested > 0n && requested > milli(allocatable[name])) short.push(name);
  }
  return short;
}
