/**
 * Which pods a SidecarSet applies to: `spec.namespace` (one namespace), `spec.namespaceSelector`
 * (labels of the pod's Namespace) and `spec.selector` (pod labels; an empty selector matches
 * nothing, as in OpenKruise).
 */
import type { SidecarSet } from '@flotilla/api';
import { labelSelectorMatcher, type LabelSelector, type Labels } from '../../../runtime/label-selector.js';

function isEmpty(selector: LabelSelector | undefined): boolean {
  return (
    !selector ||
    (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)
  );
}

/** Whether the SidecarSet covers pods of `namespace` whose Namespace carries `namespaceLabels`. */
export function namespaceInScope(ss: SidecarSet, namespace: string, namespaceLabels: Labels): boolean {
  const spec = ss.spec;
  if (spec.namespace && spec.namespace !== namespace) return false;
  if (spec.namespaceSelector && !labelSelectorMatcher(spec.namespaceSelector)(namespaceLabels ?? {})) return false;
  return true;
}

/** Whether the pod's labels are selected by the SidecarSet's selector. */
export function selectorMatches(ss: SidecarSet, podLabels: Labels): boolean {
  if (isEmpty(ss.spec.selector)) return false;
  return labelSelectorMatcher(ss.spec.selector!)(podLabels ?? {});
}

/** Full match: namespace scope and selector. `namespaceLabels` are the pod's Namespace labels. */
export function podMatchesSidecarSet(
  ss: SidecarSet,
  pod: { metadata?: { namespace?: string; labels?: Record<string, string> } },
  namespaceLabels: Labels,
): boolean {
  const namespace = pod.metadata?.namespace || 'default';
  return namespaceInScope(ss, namespace, namespaceLabels) && selectorMatches(ss, pod.metadata?.labels);
}

/**
 * podMatchesSidecarSet compiled once for many pods: the selectors are parsed once, and a
 * namespace's verdict is computed once (`namespaceLabels` is asked only for namespaces the
 * SidecarSet's namespaceSelector has to look at).
 */
export function sidecarSetPodMatcher(
  ss: SidecarSet,
  namespaceLabels: (namespace: string) => Labels,
): (namespace: string, podLabels: Labels) => boolean {
  const spec = ss.spec;
  if (isEmpty(spec.selector)) return () => false;
  const selector = labelSelectorMatcher(spec.selector!);
  const namespaceSelector = spec.namespaceSelector ? labelSelectorMatcher(spec.namespaceSelector) : undefined;
  const inScope = new Map<string, boolean>();
  const namespaceInScope = (namespace: string): boolean => {
    if (spec.namespace && spec.namespace !== namespace) return false;
    if (!namespaceSelector) return true;
    let verdict = inScope.get(namespace);
    if (verdict === undefined) inScope.set(namespace, (verdict = namespaceSelector(namespaceLabels(namespace) ?? {})));
    return verdict;
  };
  return (namespace, podLabels) => namespaceInScope(namespace) && selector(podLabels ?? {});
}
