/**
 * What a takeover test compares of a workload's pods before and after Flotilla's controller
 * starts: everything a controller could change on a pod (identity, labels, annotations, deletion,
 * node, containers, readiness gates, condition states, restarts), leaving out what kwok itself
 * rewrites (resourceVersion, timestamps). Keyed by UID, so a recreated pod shows as a new key.
 */
import type { Pod } from '../../../agent/src/kube/types.js';

export function podFingerprint(pods: readonly Pod[]): Record<string, string> {
  return Object.fromEntries(
    pods.map((p) => [
      p.metadata.uid ?? '',
      JSON.stringify([
        p.metadata.name,
        p.metadata.labels ?? {},
        p.metadata.annotations ?? {},
        p.metadata.deletionTimestamp ?? null,
        p.spec.nodeName ?? null,
        p.spec.containers,
        p.spec.readinessGates ?? [],
        (p.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).sort(),
        p.status?.containerStatuses?.map((s) => s.restartCount) ?? [],
      ]),
    ]),
  );
}
