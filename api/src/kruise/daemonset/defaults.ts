/**
 * Advanced DaemonSet defaults as OpenKruise v1.9's mutating webhook applies them
 * (SetDefaultsDaemonSet in apis/apps/defaults/v1alpha1.go, SetDefaultsDaemonSetV1beta1 in
 * v1beta1.go), with the pod template defaults the TemplateNoDefaults gate leaves on by default.
 * Both versions are defaulted alike, except that only v1alpha1 knows the deprecated `Surging`:
 * at v1beta1 it is left for validation to refuse, as v1.9's per-version defaults do.
 */
import { cloneJson } from '../../validation/json.js';
import { defaultPodSpec } from '../common/pod-defaults.js';
import { DAEMONSET_ROLLING_UPDATE_SURGING, KRUISE_V1BETA1_API_VERSION } from '../constants.js';
import type { DaemonSet } from './schema.js';

/** spec.burstReplicas when unset. */
export const DEFAULT_DAEMONSET_BURST_REPLICAS = 250;
/** spec.revisionHistoryLimit when unset. */
export const DEFAULT_DAEMONSET_REVISION_HISTORY_LIMIT = 10;

/**
 * A copy of the DaemonSet with OpenKruise's defaults: RollingUpdate with Standard and
 * maxUnavailable 1 / maxSurge 0 when neither is set; a deprecated Surging (v1alpha1) becomes
 * Standard with maxSurge 1 / maxUnavailable 0 for what it leaves unset. Idempotent.
 */
export function defaultDaemonSet(ds: DaemonSet): DaemonSet {
  const out = cloneJson(ds);
  const spec = out.spec;
  spec.template.spec ??= {};
  defaultPodSpec(spec.template.spec);
  spec.burstReplicas ??= DEFAULT_DAEMONSET_BURST_REPLICAS;
  const strategy = (spec.updateStrategy ??= {});
  if (!strategy.type) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    defaultRollingUpdate((strategy.rollingUpdate ??= {}), (out.apiVersion as string) !== KRUISE_V1BETA1_API_VERSION);
  }
  spec.revisionHistoryLimit ??= DEFAULT_DAEMONSET_REVISION_HISTORY_LIMIT;
  return out;
}

type RollingUpdate = NonNullable<NonNullable<DaemonSet['spec']['updateStrategy']>['rollingUpdate']>;

/** The rollingUpdate defaults, in place; `v1alpha1`: whether the deprecated Surging is known. */
function defaultRollingUpdate(rolling: RollingUpdate, v1alpha1: boolean): void {
  const surging = v1alpha1 && rolling.rollingUpdateType === DAEMONSET_ROLLING_UPDATE_SURGING;
  if (surging) {
    rolling.maxSurge ??= 1;
    rolling.maxUnavailable ??= 0;
  }
  if (!rolling.rollingUpdateType || surging) rolling.rollingUpdateType = 'Standard';
  if (rolling.maxUnavailable === undefined && rolling.maxSurge === undefined) {
    rolling.maxUnavailable = 1;
    rolling.maxSurge = 0;
  }
}
