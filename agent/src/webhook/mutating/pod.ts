/**
 * /mutate-pod on CREATE: the KruisePodReady readiness gate for Kruise-owned pods, then SidecarSet
 * injection. Reads SidecarSets, Namespaces and revisions through `PodMutationSources` (informer
 * caches in the agent, plain arrays in tests); the decision itself is computed purely.
 */
import type { SidecarSet } from '@flotilla/api';
import { errorMessage, hasCode } from '../../errors.js';
import { formatTime } from '../../runtime/kube-time.js';
import type { Labels } from '../../runtime/label-selector.js';
import { podMatchesSidecarSet } from '../../controllers/sidecarset/control/match.js';
import { injectSidecars, type InjectionConflict } from '../../controllers/sidecarset/inject.js';
import { sidecarSetForNewPod } from '../../controllers/sidecarset/inject-revision.js';
import type { ControllerRevision, MutablePod } from '../../kube/types.js';
import { allow, allowPatched, deny } from '../admission/review.js';
import type { AdmissionHandler } from '../admission/types.js';
import { injectKruiseReadinessGate } from './readiness-gate.js';

export interface PodMutationSources {
  sidecarSets(): readonly SidecarSet[];
  /** Labels of a Namespace; undefined when unknown (then namespaceSelectors do not match). */
  namespaceLabels(namespace: string): Labels;
  /** Stored revisions of the SidecarSet. */
  revisions(sidecarSet: SidecarSet): readonly ControllerRevision[];
  /** Told about container-name clashes between SidecarSets (for an event). */
  onConflicts?(conflicts: readonly InjectionConflict[], namespace: string): void;
  now?(): number;
  random?(): number;
  /** OpenKruise's EnableSortSidecarContainerByName gate: sidecar containers sorted by name. */
  sortSidecarContainersByName?: boolean;
}

const REFUSING_CODES = ['SIDECARSET_ERR_INJECTION_REVISION', 'SIDECARSET_ERR_RESOURCES_POLICY'] as const;

const isActive = (pod: MutablePod): boolean =>
  !pod.metadata?.deletionTimestamp && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';

/** The SidecarSets to inject into a new pod, at the revision each one injects. */
export function sidecarSetsForPod(pod: MutablePod, namespace: string, sources: PodMutationSources): SidecarSet[] {
  const view = { metadata: { namespace, labels: pod.metadata?.labels } };
  const nsLabels = sources.namespaceLabels(namespace);
  const random = (): number => (sources.random ? sources.random() : Math.random());
  return sources
    .sidecarSets()
    .filter((ss) => !ss.spec.injectionStrategy?.paused && podMatchesSidecarSet(ss, view, nsLabels))
    .map((ss) => sidecarSetForNewPod(ss, pod.metadata?.labels, sources.revisions(ss), random));
}

export function podMutatingHandler(sources: PodMutationSources): AdmissionHandler {
  return (request) => {
    if (request.operation !== 'CREATE' || request.subResource || request.resource.resource !== 'pods') return allow();
    const original = request.object as MutablePod | undefined;
    if (!original || typeof original !== 'object') return deny('the request has no pod', 400, 'BadRequest');
    if (!isActive(original)) return allow();
    const namespace = request.namespace || original.metadata?.namespace || 'default';
    const pod = structuredClone(original);
    injectKruiseReadinessGate(pod);
    let result: ReturnType<typeof injectSidecars>;
    try {
      const sidecarSets = sidecarSetsForPod(pod, namespace, sources);
      const now = formatTime((sources.now ?? Date.now)());
      result = injectSidecars(pod, sidecarSets, now, { sortContainersByName: sources.sortSidecarContainersByName });
    } catch (err) {
      // A missing injection revision, or a resourcesPolicy with no target container or a failing
      // expression, refuses the pod (as OpenKruise).
      if (REFUSING_CODES.some((code) => hasCode(err, code))) return deny(errorMessage(err), 500, 'InternalError');
      throw err;
    }
    if (result.conflicts.length > 0) sources.onConflicts?.(result.conflicts, namespace);
    return allowPatched(original, result.pod);
  };
}
