/**
 * Which version of a SidecarSet a new pod gets (getSuitableRevisionSidecarSet on CREATE): the
 * latest, unless injectionStrategy.revision names one. Then the named revision is injected when
 * updates are paused, under policy Always, or under Partial for pods outside
 * updateStrategy.selector; pods inside it get the latest with probability 1 − partition%.
 */
import { parseIntOrPercent, type SidecarSet } from '@flotilla/api';
import { labelSelectorMatcher } from '../../runtime/label-selector.js';
import { findInjectionRevision, restoreSidecarSet } from './revision.js';
import type { ControllerRevision } from './types.js';

export class InjectionRevisionError extends Error {
  override readonly name = 'InjectionRevisionError';
}

/** The SidecarSet to inject; throws InjectionRevisionError when the named revision does not exist. */
export function sidecarSetForNewPod(
  ss: SidecarSet,
  podLabels: Record<string, string> | undefined,
  revisions: readonly ControllerRevision[],
  random: () => number,
): SidecarSet {
  const info = ss.spec.injectionStrategy?.revision;
  if (!info || (info.revisionName === undefined && info.customVersion === undefined)) return ss;
  const rev = findInjectionRevision(revisions, info);
  if (!rev) {
    const which = info.revisionName ?? `customVersion ${info.customVersion}`;
    throw new InjectionRevisionError(`SidecarSet ${ss.metadata?.name}: injection revision ${which} not found`);
  }
  const specific = restoreSidecarSet(ss, rev);
  const strategy = ss.spec.updateStrategy ?? {};
  if (strategy.paused || info.policy !== 'Partial') return specific;
  if (strategy.selector && !labelSelectorMatcher(strategy.selector)(podLabels ?? {})) return specific;
  const partition = strategy.partition === undefined ? undefined : parseIntOrPercent(strategy.partition);
  if (partition?.kind !== 'percent') return ss;
  return random() <= partition.value / 100 ? specific : ss;
}
