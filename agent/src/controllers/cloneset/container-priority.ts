/**
 * Container priorities for in-place update batches. In OpenKruise the pod webhook turns
 * `KRUISE_CONTAINER_PRIORITY` env values (or the pod annotation
 * `apps.kruise.io/container-launch-priority: Ordered`) into a `KRUISE_CONTAINER_BARRIER` env whose
 * configMapKeyRef key is `p_<priority>`, and the in-place update reads that. Flotilla's webhook
 * may not have run on a pod, so both forms are read here, with the webhook's rules: `Ordered`
 * gives the i-th container priority -i; otherwise the env values count only when they are not all
 * equal, and containers without the env get 0.
 */
import { ANNOTATION_CONTAINER_LAUNCH_PRIORITY, ENV_CONTAINER_PRIORITY } from '@flotilla/api';
import type { Container } from '@flotilla/api';
import type { Pod } from '../../kube/types.js';

export const ENV_CONTAINER_BARRIER = 'KRUISE_CONTAINER_BARRIER';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { configMapKeyRef?: { key?: string } };
}

function env(container: Container): EnvVar[] {
  return (container.env ?? []) as EnvVar[];
}

/** The priority from an injected barrier env (`p_<n>`), as containerlaunchpriority.GetContainerPriority. */
function barrierPriority(container: Container): number | undefined {
  const barrier = env(container).find((e) => e.name === ENV_CONTAINER_BARRIER);
  if (!barrier) return undefined;
  const n = Number.parseInt(barrier.valueFrom?.configMapKeyRef?.key?.slice(2) ?? '', 10);
  return Number.isNaN(n) ? 0 : n;
}

/**
 * Each container's update priority by name; a container maps to undefined when the pod has no
 * priorities (then all changed containers update in one batch).
 */
export function containerPriorities(pod: Pod): Map<string, number | undefined> {
  const containers = pod.spec.containers;
  const out = new Map<string, number | undefined>(containers.map((c) => [c.name, barrierPriority(c)]));
  if ([...out.values()].some((p) => p !== undefined)) return out;

  if (pod.metadata.annotations?.[ANNOTATION_CONTAINER_LAUNCH_PRIORITY] === 'Ordered') {
    return new Map(containers.map((c, i) => [c.name, -i]));
  }
  const declared = containers.map((c) => {
    const v = env(c).find((e) => e.name === ENV_CONTAINER_PRIORITY)?.value;
    const n = v === undefined ? 0 : Number.parseInt(v, 10);
    return Number.isNaN(n) ? 0 : n;
  });
  if (declared.every((p) => p === declared[0])) return out;
  return new Map(containers.map((c, i) => [c.name, declared[i]]));
}

/**
 * Which of the `changed` containers update in this batch: every container without a priority,
 * plus those sharing the highest priority among the rest. The others wait for the next batch.
 */
export function nextBatch(pod: Pod, changed: ReadonlySet<string>): { now: Set<string>; later: Set<string> } {
  const priorities = containerPriorities(pod);
  const now = new Set<string>();
  let highest: number | undefined;
  let top: string[] = [];
  for (const c of pod.spec.containers) {
    if (!changed.has(c.name)) continue;
    const p = priorities.get(c.name);
    if (p === undefined) now.add(c.name);
    else if (highest === undefined || p > highest) [highest, top] = [p, [c.name]];
    else if (p === highest) top.push(c.name);
  }
  for (const name of top) now.add(name);
  const later = new Set([...changed].filter((n) => !now.has(n)));
  return { now, later };
}
