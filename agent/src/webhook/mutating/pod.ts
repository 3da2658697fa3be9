/**
 * /mutate-pod on CREATE: the KruisePodReady readiness gate for Kruise-owned pods, SidecarSet
 * injection, the WorkloadSpread subset, then the `kruise.io/related-pub` annotation naming the
 * PodUnavailableBudget the pod belongs to. Reads SidecarSets, Namespaces and revisions through
 * `PodMutationSources` (informer caches in the agent, plain arrays in tests); the decision itself
 * is computed purely.
 */
import { ANNOTATION_RELATED_PUB, type SidecarSet } from '@flotilla/api';
import { errorMessage, hasCode } from '../../errors.js';
import { formatTime } from '../../runtime/kube-time.js';
import type { Labels } from '../../runtime/label-selector.js';
import { podMatchesSidecarSet } from '../../controllers/sidecarset/control/match.js';
import { injectSidecars, type InjectionConflict } from '../../controllers/sidecarset/inject.js';
import { sidecarSetForNewPod } from '../../controllers/sidecarset/inject-revision.js';
import type { ControllerRevision, MutablePod } from '../../kube/types.js';
import type { SpreadGuard } from '../../controllers/workloadspread/admission.js';
import { injectSubset } from '../../controllers/workloadspread/inject.js';
import type { SpreadPod } from '../../controllers/workloadspread/subsets.js';
import { allow, allowPatched, deny } from '../admission/review.js';
import type { AdmissionDecision, AdmissionHandler } from '../admission/types.js';
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
  /** WorkloadSpread: the subset a new pod goes into (recorded in the WorkloadSpread's status). */
  spread?: SpreadGuard;
  /** The PodUnavailableBudget a new pod belongs to (with a PUB gate on); never throws. */
  relatedPub?(pod: MutablePod, namespace: string): Promise<string | undefined>;
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

/**
 * The pod placed into its WorkloadSpread subset, as OpenKruise injects it after the sidecars. The
 * pod's name (or, without one, its generateName) identifies it; an assignment that cannot be
 * recorded refuses the pod, so its workload retries.
 */
async function spreadPod(pod: MutablePod, namespace: string, dryRun: boolean, guard: SpreadGuard): Promise<MutablePod> {
  const spread = { ...pod, metadata: { ...pod.metadata, name: pod.metadata?.name ?? '', namespace } } as SpreadPod;
  const assignment = await guard.assign({ namespace, pod: spread, dryRun });
  return assignment ? injectSubset(pod, assignment.subset, assignment.matched) : pod;
}

/** The pod with the related-pub annotation naming its budget, as the pod looks once placed (labels included). */
async function boundToBudget(pod: MutablePod, namespace: string, sources: PodMutationSources): Promise<MutablePod> {
  const pub = await sources.relatedPub?.(pod, namespace);
  if (!pub) return pod;
  return {
    ...pod,
    metadata: { ...pod.metadata, annotations: { ...pod.metadata?.annotations, [ANNOTATION_RELATED_PUB]: pub } },
  };
}

/**
 * The answer for the mutated pod, once placed into its WorkloadSpread subset (when a guard is
 * given) and bound to its budget.
 */
async function placed(
  original: MutablePod,
  pod: MutablePod,
  namespace: string,
  dryRun: boolean,
  sources: PodMutationSources,
): Promise<AdmissionDecision> {
  let spread = pod;
  if (sources.spread) {
    try {
      spread = await spreadPod(pod, namespace, dryRun, sources.spread);
    } catch (err) {
      return deny(errorMessage(err), 500, 'InternalError');
    }
  }
  return allowPatched(original, await boundToBudget(spread, namespace, sources));
}

export function podMutatingHandler(sources: PodMutationSources): AdmissionHandler {
  return async (request) => {
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
    return placed(original, result.pod, namespace, request.dryRun === true, sources);
  };
}
