/**
 * Which version of a SidecarSet a new pod gets (getSuitableRevisionSidecarSet on CREATE): the
 * latest, unless injectionStrategy.revision names one. Then the named revision is injected when
 * updates are paused, under policy Always, or under Partial for pods outside
 * updateStrategy.selector; pods inside it get the latest with probability 1 − partition%
 * (an integer partition: always the latest).
 *
 * A revisionName that does not exist refuses the pod (OpenKruise fails the admission too); a
 * customVersion no revision carries falls back to the latest, as OpenKruise does. The SidecarSet
 * webhook refuses both when the SidecarSet is written (missingInjectionRevision).
 */
import { parseIntOrPercent, type SidecarSet } from '@flotilla/api';
import { AgentError } from '../../errors.js';
import { labelSelectorMatcher } from '../../runtime/label-selector.js';
import { findInjectionRevision, restoreSidecarSet } from './revision.js';
import type { ControllerRevision } from '../../kube/types.js';

/**
 * The SidecarSet to inject; throws SIDECARSET_ERR_INJECTION_REVISION when the named revision does
 * not exist.
 */
export function sidecarSetForNewPod(
  ss: SidecarSet,
  podLabels: Record<string, string> | undefined,
  revisions: readonly ControllerRevision[],
  random: () => number,
): SidecarSet {
  const info = requestedRevision(ss);
  if (!info) return ss;
  const rev = findInjectionRevision(revisions, info);
  if (!rev && info.revisionName !== undefined) {
    throw new AgentError(
      'SIDECARSET_ERR_INJECTION_REVISION',
      `SidecarSet ${ss.metadata?.name}: spec.injectionStrategy.revision.revisionName: ControllerRevision ${info.revisionName} not found`,
    );
  }
  if (!rev) return ss;
  const specific = restoreSidecarSet(ss, rev);
  return getsNamedRevision(ss, info.policy, podLabels, random) ? specific : ss;
}

type RevisionInfo = NonNullable<NonNullable<SidecarSet['spec']['injectionStrategy']>['revision']>;

/** injectionStrategy.revision when it names a revision (by name or custom version). */
function requestedRevision(ss: SidecarSet): RevisionInfo | undefined {
  const info = ss.spec.injectionStrategy?.revision;
  if (!info || (info.revisionName === undefined && info.customVersion === undefined)) return undefined;
  return info;
}

/**
 * Whether a new pod gets the named revision rather than the latest: always while paused or under
 * policy Always; under Partial, pods outside updateStrategy.selector do, and pods inside it with
 * probability partition% (an integer partition: never).
 */
function getsNamedRevision(
  ss: SidecarSet,
  policy: RevisionInfo['policy'],
  podLabels: Record<string, string> | undefined,
  random: () => number,
): boolean {
  const strategy = ss.spec.updateStrategy ?? {};
  if (strategy.paused || policy !== 'Partial') return true;
  if (strategy.selector && !labelSelectorMatcher(strategy.selector)(podLabels ?? {})) return true;
  const partition = strategy.partition === undefined ? undefined : parseIntOrPercent(strategy.partition);
  if (partition?.kind !== 'percent') return false;
  return random() <= partition.value / 100;
}

/**
 * The field error for an injectionStrategy.revision that names no stored revision, or undefined
 * (OpenKruise's validating webhook checks this when the SidecarSet is written).
 */
export function missingInjectionRevision(
  ss: SidecarSet,
  revisions: readonly ControllerRevision[],
): { path: string; message: string } | undefined {
  const info = requestedRevision(ss);
  if (!info || findInjectionRevision(revisions, info)) return undefined;
  return info.revisionName !== undefined
    ? {
        path: 'spec.injectionStrategy.revision.revisionName',
        message: `cannot find ControllerRevision ${info.revisionName} of this SidecarSet`,
      }
    : {
        path: 'spec.injectionStrategy.revision.customVersion',
        message: `cannot find a ControllerRevision of this SidecarSet labelled apps.kruise.io/sidecarset-custom-version=${info.customVersion}`,
      };
}
