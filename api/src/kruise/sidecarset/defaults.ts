/**
 * SidecarSet defaults as OpenKruise's mutating webhook applies them (SetDefaultsSidecarSet in
 * apis/apps/defaults/v1alpha1.go).
 */
import { cloneJson } from '../../validation/json.js';
import { defaultContainer, defaultFieldRef, defaultVolume } from '../common/pod-defaults.js';
import type { SidecarContainer, SidecarSet } from './schema.js';

export const DEFAULT_SIDECARSET_MAX_UNAVAILABLE = 1;
export const DEFAULT_SIDECARSET_REVISION_HISTORY_LIMIT = 10;

/** Injection settings and container defaults of one sidecar (setDefaultSidecarContainer). */
function defaultSidecarContainer(container: SidecarContainer, injectPolicy: string): void {
  if (!container.podInjectPolicy) container.podInjectPolicy = injectPolicy;
  container.upgradeStrategy = { ...(container.upgradeStrategy ?? {}) };
  if (!container.upgradeStrategy.upgradeType) container.upgradeStrategy.upgradeType = 'ColdUpgrade';
  container.shareVolumePolicy = { ...(container.shareVolumePolicy ?? {}) };
  if (!container.shareVolumePolicy.type) container.shareVolumePolicy.type = 'disabled';
  // The CRD default (+kubebuilder:default=".*"): every container is a target.
  if (container.resourcesPolicy) container.resourcesPolicy.targetContainersNameRegex ??= '.*';
  for (const transfer of container.transferEnv ?? []) defaultFieldRef(transfer.sourceContainerNameFrom?.fieldRef);
  // Sidecars get Kubernetes' container defaults, but OpenKruise leaves their startupProbe alone.
  defaultContainer(container, { kubernetesContainerDefaults: true, startupProbe: false });
}

/**
 * A copy of the SidecarSet with OpenKruise's defaults applied. Idempotent. Init containers are
 * injected after the pod's own by default, containers before.
 */
export function defaultSidecarSet(sidecarSet: SidecarSet): SidecarSet {
  const out = cloneJson(sidecarSet);
  const spec = out.spec;
  defaultUpdateStrategy((spec.updateStrategy ??= {}));
  for (const container of spec.initContainers ?? []) defaultSidecarContainer(container, 'AfterAppContainer');
  for (const container of spec.containers ?? []) defaultSidecarContainer(container, 'BeforeAppContainer');
  for (const volume of spec.volumes ?? []) defaultVolume(volume);
  spec.revisionHistoryLimit ??= DEFAULT_SIDECARSET_REVISION_HISTORY_LIMIT;
  for (const patch of spec.patchPodMetadata ?? []) {
    if (!patch.patchPolicy) patch.patchPolicy = 'Retain';
  }
  const revision = spec.injectionStrategy?.revision;
  if (revision && !revision.policy) revision.policy = 'Always';
  return out;
}

function defaultUpdateStrategy(strategy: NonNullable<SidecarSet['spec']['updateStrategy']>): void {
  if (!strategy.type) strategy.type = 'RollingUpdate';
  strategy.maxUnavailable ??= DEFAULT_SIDECARSET_MAX_UNAVAILABLE;
  strategy.partition ??= 0;
}
