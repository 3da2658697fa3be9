/**
 * Advanced StatefulSet defaults as OpenKruise v1.9's mutating webhook applies them
 * (SetDefaultsStatefulSet in apis/apps/defaults/v1beta1.go) with v1.9's default gates:
 * StatefulSetAutoDeletePVC on (the retention policy defaults to Retain/Retain),
 * StatefulSetAutoResizePVCGate off (volumeClaimUpdateStrategy stays unset), TemplateNoDefaults off
 * (the pod template and claim templates get their defaults).
 */
import { cloneJson } from '../../validation/json.js';
import { KRUISE_API_VERSION } from '../constants.js';
import { defaultPodSpec } from '../common/pod-defaults.js';
import type { PersistentVolumeClaimTemplate } from '../common/pod.js';
import { roundResourceList } from '../common/quantity-rounding.js';
import type { StatefulSet } from './schema.js';

export const DEFAULT_STATEFULSET_REPLICAS = 1;
export const DEFAULT_STATEFULSET_REVISION_HISTORY_LIMIT = 10;

/** SetDefaults_PersistentVolumeClaim (phase Pending) and resource rounding of a claim template. */
function defaultClaimTemplate(claim: PersistentVolumeClaimTemplate): void {
  claim.status = { ...(claim.status ?? {}) };
  if (!claim.status.phase) claim.status.phase = 'Pending';
  if (claim.status.capacity) claim.status.capacity = roundResourceList(claim.status.capacity);
  const resources = claim.spec?.resources;
  if (resources?.limits) resources.limits = roundResourceList(resources.limits);
  if (resources?.requests) resources.requests = roundResourceList(resources.requests);
}

/** The rolling-update defaults: partition 0, maxUnavailable 1, ReCreate, minReadySeconds 0. */
function defaultUpdateStrategy(spec: StatefulSet['spec']): void {
  const strategy = (spec.updateStrategy ??= {});
  if (!strategy.type) strategy.type = 'RollingUpdate';
  if (strategy.type !== 'RollingUpdate') return;
  const rolling = (strategy.rollingUpdate ??= {});
  rolling.partition ??= 0;
  rolling.maxUnavailable ??= 1;
  if (!rolling.podUpdatePolicy) rolling.podUpdatePolicy = 'ReCreate';
  rolling.minReadySeconds ??= 0;
}

/**
 * A copy of the StatefulSet (of either version) with OpenKruise's defaults applied;
 * `templateDefaults` false leaves the pod and claim templates alone (OpenKruise does so on an
 * update that keeps the template). Idempotent.
 */
export function defaultStatefulSet(set: StatefulSet, templateDefaults = true): StatefulSet {
  const out = cloneJson(set);
  const spec = out.spec;
  if (!spec.podManagementPolicy) spec.podManagementPolicy = 'OrderedReady';
  defaultUpdateStrategy(spec);
  // v1alpha1 has no retention policy: OpenKruise defaults a v1alpha1 set as v1beta1 and converts
  // back, which drops it.
  if ((out.apiVersion as string) !== KRUISE_API_VERSION) {
    const retention = (spec.persistentVolumeClaimRetentionPolicy ??= {});
    if (!retention.whenDeleted) retention.whenDeleted = 'Retain';
    if (!retention.whenScaled) retention.whenScaled = 'Retain';
  }
  spec.replicas ??= DEFAULT_STATEFULSET_REPLICAS;
  spec.revisionHistoryLimit ??= DEFAULT_STATEFULSET_REVISION_HISTORY_LIMIT;
  if (templateDefaults) {
    // Go's PodTemplateSpec always has a spec, so the pod defaults land even on a template without one.
    spec.template.spec ??= {};
    defaultPodSpec(spec.template.spec);
    for (const claim of spec.volumeClaimTemplates ?? []) defaultClaimTemplate(claim);
  }
  return out;
}
