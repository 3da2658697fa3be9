/**
 * In-place resource resize, pure (OpenKruise's in-place workload vertical scaling, gate
 * InPlaceWorkloadVerticalScaling; pkg/util/inplaceupdate/inplace_update_vertical.go):
 *
 * - which revision changes of container resources a running pod can take: only a `replace` of a
 *   cpu or memory value under `limits` or `requests`, and only when the template's QoS class
 *   stays the same (the apiserver refuses a resize that changes it);
 * - the body of the strategic-merge patch to the pod's `resize` subresource (Kubernetes ≥ 1.32),
 *   with only the values that differ from the pod's spec;
 * - whether a resize-only update must take the pod out of its Services first (a changed resource
 *   whose container resizePolicy is RestartContainer);
 * - when the kubelet has applied it: every container status reports exactly the spec's
 *   resources.
 */
import { parseQuantityMilli, type Container, type Quantity, type ResourceList } from '@flotilla/api';
import type { JsonPatchOp } from './json-diff.js';
import type { Pod } from '../../kube/types.js';

/** The resources a pod may change in place (OpenKruise's allowedResizeResourceKey). */
export const RESIZABLE_RESOURCES: readonly string[] = ['cpu', 'memory'];

/** corev1.ResourceRequirements as the in-place update records it. */
export interface ResourceRequirements {
  limits?: Record<string, string>;
  requests?: Record<string, string>;
}

/** New resource values by container name. */
export type ContainerResources = Record<string, ResourceRequirements>;

/** `/spec/containers/<i>/resources/<rest>` of a template-relative JSON pointer. */
const RESOURCES_PATH = /^\/spec\/containers\/([0-9]+)\/resources\/(.*)$/;

/** Whether a template-relative path is under a container's resources. */
export function isResourcesPath(path: string): boolean {
  return RESOURCES_PATH.test(path);
}

/**
 * Records one diff operation on a container's resources (UpdateInplaceUpdateMetadata) into
 * `into`; false when it cannot be done in place: adding or removing a value (limits or requests
 * appearing or going), a resource other than cpu and memory, or a path deeper or shallower than
 * `limits/<name>` / `requests/<name>`.
 */
export function addResourceChange(
  op: JsonPatchOp,
  containers: readonly Container[],
  into: ContainerResources,
): boolean {
  const match = RESOURCES_PATH.exec(op.path);
  const container = match ? containers[Number(match[1])] : undefined;
  const [kind, name, ...deeper] = (match?.[2] ?? '').split('/');
  if (!container || deeper.length > 0 || (kind !== 'limits' && kind !== 'requests') || name === undefined) return false;
  if (op.op !== 'replace' || typeof op.value !== 'string' || !RESIZABLE_RESOURCES.includes(name)) return false;
  const entry = (into[container.name] ??= {});
  (entry[kind] ??= {})[name] = op.value;
  return true;
}

/** Two quantities with the same value ("1" and "1000m"); text comparison when one does not parse. */
export function quantityEqual(a: Quantity | undefined, b: Quantity | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const x = parseQuantityMilli(String(a));
  const y = parseQuantityMilli(String(b));
  return x && y ? x.milli === y.milli : String(a) === String(b);
}

function milli(q: Quantity | undefined): bigint {
  return q === undefined ? 0n : (parseQuantityMilli(String(q))?.milli ?? 0n);
}

/** Resource lists with the same names and equal values; absent and empty are the same (JSON can't tell them apart). */
export function resourceListEqual(a: ResourceList | undefined, b: ResourceList | undefined): boolean {
  const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]);
  return [...keys].every((k) => quantityEqual(a?.[k], b?.[k]));
}

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/**
 * The QoS class of a pod spec (Kubernetes' ComputePodQOS over init and regular containers,
 * cpu and memory only): BestEffort without any positive request or limit; Guaranteed when every
 * container limits both and each summed request equals its summed limit; else Burstable.
 */
export function qosClass(spec: { containers?: readonly Container[]; initContainers?: readonly Container[] }): QosClass {
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let guaranteed = true;
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    addInto(requests, positiveValues(c.resources?.requests));
    const limited = positiveValues(c.resources?.limits);
    addInto(limits, limited);
    if (!RESIZABLE_RESOURCES.every((name) => limited.some(([n]) => n === name))) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  const equal = [...requests].every(([name, q]) => limits.get(name) === q);
  return guaranteed && equal && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

/** The positive cpu and memory values of a resource list, in milli-units. */
function positiveValues(list: ResourceList | undefined): [string, bigint][] {
  return Object.entries(list ?? {})
    .filter(([name]) => RESIZABLE_RESOURCES.includes(name))
    .map(([name, q]): [string, bigint] => [name, milli(q)])
    .filter(([, m]) => m > 0n);
}

function addInto(sums: Map<string, bigint>, values: readonly [string, bigint][]): void {
  for (const [name, m] of values) sums.set(name, (sums.get(name) ?? 0n) + m);
}

/** The values of `wanted` (cpu and memory only) that differ from `current`. */
function differing(
  current: ResourceList | undefined,
  wanted: Record<string, string> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, q] of Object.entries(wanted ?? {})) {
    if (RESIZABLE_RESOURCES.includes(name) && !quantityEqual(current?.[name], q)) out[name] = q;
  }
  return out;
}

/** The strategic-merge patch a resize sends to `pods/<name>/resize`. */
export interface ResizePatch {
  spec: { containers: { name: string; resources: ResourceRequirements }[] };
}

/**
 * The pods/resize patch that gives the pod's containers these resources
 * (GenerateResourcePatch): per container, only the cpu and memory values that differ from its
 * spec; undefined when nothing differs.
 */
export function resizePatch(pod: Pod, wanted: ContainerResources): ResizePatch | undefined {
  const containers: ResizePatch['spec']['containers'] = [];
  for (const c of pod.spec.containers) {
    const target = wanted[c.name];
    if (!target) continue;
    const limits = differing(c.resources?.limits, target.limits);
    const requests = differing(c.resources?.requests, target.requests);
    const resources: ResourceRequirements = {
      ...(Object.keys(limits).length > 0 ? { limits } : {}),
      ...(Object.keys(requests).length > 0 ? { requests } : {}),
    };
    if (resources.limits || resources.requests) containers.push({ name: c.name, resources });
  }
  return containers.length > 0 ? { spec: { containers } } : undefined;
}

/**
 * Writes the values into the pod's spec (UpdateResource), for apiservers without the resize
 * subresource (before Kubernetes 1.32), where the pod update itself changes them.
 */
export function writeResources(pod: Pod, wanted: ContainerResources): void {
  for (const c of pod.spec.containers) {
    const target = wanted[c.name];
    if (!target) continue;
    const resources = (c.resources ??= {});
    for (const kind of ['limits', 'requests'] as const) {
      const values = Object.entries(target[kind] ?? {}).filter(([name]) => RESIZABLE_RESOURCES.includes(name));
      if (values.length > 0) resources[kind] = { ...resources[kind], ...Object.fromEntries(values) };
    }
  }
}

interface ResizePolicy {
  resourceName?: string;
  restartPolicy?: string;
}

/**
 * Whether resizing these containers restarts one (defaultCheckPodNeedsBeUnready): a changed cpu
 * (or memory) value, in limits or requests, of a container whose resizePolicy for cpu (or
 * memory) is RestartContainer. Only then does a resize-only update mark the pod not ready.
 */
export function resizeRestartsContainer(pod: Pod, changes: ContainerResources): boolean {
  return pod.spec.containers.some((c) => {
    const change = changes[c.name];
    if (!change) return false;
    const changed = (name: string): boolean => name in (change.limits ?? {}) || name in (change.requests ?? {});
    const policies = (c.resizePolicy ?? []) as ResizePolicy[];
    return policies.some(
      (p) =>
        p.restartPolicy === 'RestartContainer' &&
        RESIZABLE_RESOURCES.includes(p.resourceName ?? '') &&
        changed(p.resourceName!),
    );
  });
}

interface StatusResources {
  limits?: ResourceList;
  requests?: ResourceList;
}

/**
 * Why the kubelet has not yet applied the pod's resources (IsUpdateCompleted), or undefined when
 * it has: one status per container, each with `resources` whose limits and requests equal the
 * spec's exactly (every container, not only the resized ones).
 */
export function resourcesNotApplied(pod: Pod): string | undefined {
  const statuses = pod.status?.containerStatuses ?? [];
  if (statuses.length !== pod.spec.containers.length) return 'some container status is not reported';
  const specs = new Map(pod.spec.containers.map((c) => [c.name, c]));
  for (const s of statuses) {
    const spec = specs.get(s.name);
    const reported = s.resources as StatusResources | undefined;
    const same =
      spec !== undefined &&
      reported !== undefined &&
      resourceListEqual(spec.resources?.limits, reported.limits) &&
      resourceListEqual(spec.resources?.requests, reported.requests);
    if (!same) return `container ${s.name} resources not changed`;
  }
  return undefined;
}

/**
 * Whether the apiserver serves the pods/resize subresource (ShouldUpdateResourceByResize):
 * Kubernetes 1.32 or later, from `/version`'s gitVersion ("v1.36.3", "v1.33.2-gke.1", "v1.32+").
 * A version that does not parse counts as older, as OpenKruise's guard does.
 */
export function servesResizeSubresource(gitVersion: string): boolean {
  const m = /^v?(\d+)\.(\d+)/.exec(gitVersion.trim());
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 1 || (major === 1 && minor >= 32);
}
