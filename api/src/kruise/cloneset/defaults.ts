/**
 * CloneSet defaults as OpenKruise's mutating webhook applies them (SetDefaultsCloneSet in
 * apis/apps/defaults/v1alpha1.go, with template defaults injected as the TemplateNoDefaults gate
 * leaves them by default).
 */
import { cloneJson } from '../../validation/json.js';
import { defaultPodSpec } from '../common/pod-defaults.js';
import type { PersistentVolumeClaimTemplate } from '../common/pod.js';
import { roundResourceList } from '../common/quantity-rounding.js';
import type { CloneSet } from './schema.js';

export const DEFAULT_CLONESET_REPLICAS = 1;
export const DEFAULT_REVISION_HISTORY_LIMIT = 10;
export const DEFAULT_CLONESET_MAX_UNAVAILABLE = '20%';

/** SetDefaults_PersistentVolumeClaim (phase Pending) and resource rounding of a claim template. */
function defaultClaimTemplate(claim: PersistentVolumeClaimTemplate): void {
  claim.status = { ...(claim.status ?? {}) };
  if (!claim.status.phase) claim.status.phase = 'Pending';
  if (claim.status.capacity) claim.status.capacity = roundResourceList(claim.status.capacity);
  const resources = claim.spec?.resources;
  if (resources?.limits) resources.limits = roundResourceList(resources.limits);
  if (resources?.requests) resources.requests = roundResourceList(resources.requests);
}

/**
 * A copy of the CloneSet with OpenKruise's defaults applied. Idempotent: defaulting a defaulted
 * CloneSet changes nothing.
 */
export function defaultCloneSet(cloneSet: CloneSet): CloneSet {
  const out = cloneJson(cloneSet);
  const spec = out.spec;
  spec.replicas ??= DEFAULT_CLONESET_REPLICAS;
  spec.revisionHistoryLimit ??= DEFAULT_REVISION_HISTORY_LIMIT;

  // Go's PodTemplateSpec always has a spec, so the pod defaults land even on a template without one.
  spec.template.spec ??= {};
  defaultPodSpec(spec.template.spec);
  for (const claim of spec.volumeClaimTemplates ?? []) defaultClaimTemplate(claim);

  const strategy = (spec.updateStrategy ??= {});
  if (!strategy.type) strategy.type = 'ReCreate';
  else if (strategy.type === 'InPlaceIfPossible' || strategy.type === 'InPlaceOnly')
    strategy.inPlaceUpdateStrategy ??= {};
  strategy.partition ??= 0;
  strategy.maxUnavailable ??= DEFAULT_CLONESET_MAX_UNAVAILABLE;
  strategy.maxSurge ??= 0;
  // scaleStrategy.maxUnavailable stays unset: OpenKruise reads unset as "no limit on scale-up".
  return out;
}
