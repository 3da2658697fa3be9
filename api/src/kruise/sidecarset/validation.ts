/**
 * SidecarSet validation: the schema, then OpenKruise's validating-webhook rules
 * (pkg/webhook/sidecarset/validating) on the defaulted object. Rules that need other objects of
 * the cluster (name clashes with other SidecarSets, the patchPodMetadata whitelist ConfigMap,
 * existence of the injected revision) belong to the webhook that can read them.
 */
import {
  childPath,
  duplicate,
  type FieldError,
  forbidden,
  indexPath,
  invalid,
  notSupported,
  required,
} from '../../validation/field-error.js';
import { parseImageReference } from '../../validation/image-ref.js';
import { isRecord } from '../../validation/json.js';
import { isEmptySelector, validateAnnotations, validateLabelSelector } from '../../validation/labels.js';
import { dns1123LabelErrors } from '../../validation/names.js';
import {
  KruiseKind,
  POD_INJECT_POLICIES,
  SHARE_VOLUME_POLICY_TYPES,
  SIDECAR_UPGRADE_TYPES,
  SIDECARSET_INJECT_REVISION_POLICIES,
  SIDECARSET_PATCH_POLICIES,
  SIDECARSET_UPDATE_STRATEGY_TYPES,
} from '../constants.js';
import type { LabelSelector } from '../common/meta.js';
import { validateMetadata } from '../common/metadata-validation.js';
import { validateContainer, validateVolumes } from '../common/pod-validation.js';
import {
  validateIntOrPercent,
  validatePriorityStrategy,
  validateScatterStrategy,
} from '../common/strategy-validation.js';
import { type KindRules, validateObject } from '../common/validate-object.js';
import { defaultSidecarSet } from './defaults.js';
import { validateResourcesPolicy, validateShareVolumeDevicePolicy } from './resources-policy-validation.js';
import { validateTransferEnv } from './transfer-env.js';
import { type SidecarContainer, type SidecarSet, SidecarSetSchema, type SidecarSetSpec } from './schema.js';

const SIDECARSET_NAME = /^[a-zA-Z0-9-]+$/;
const SIDECARSET_NAME_MAX_LENGTH = 63;

/** OpenKruise's extra rule: SidecarSet names become parts of annotation keys and env values. */
function sidecarSetNameRules(name: string): string[] {
  const errors: string[] = [];
  if (!SIDECARSET_NAME.test(name)) errors.push("sidecarset name must consist of alphanumeric characters or '-'");
  if (name.length > SIDECARSET_NAME_MAX_LENGTH)
    errors.push(`must be no more than ${SIDECARSET_NAME_MAX_LENGTH} characters`);
  return errors;
}

function validateNonEmptySelector(selector: LabelSelector, path: string): FieldError[] {
  const errors = validateLabelSelector(selector, path);
  if (isEmptySelector(selector)) errors.push(invalid(path, selector, 'empty selector is not valid for sidecarset'));
  return errors;
}

function validateScope(spec: SidecarSetSpec): FieldError[] {
  const errors: FieldError[] = [];
  if (!spec.selector) errors.push(required('spec.selector', 'no selector defined for SidecarSet'));
  else errors.push(...validateNonEmptySelector(spec.selector, 'spec.selector'));
  if (spec.namespace) {
    for (const m of dns1123LabelErrors(spec.namespace)) errors.push(invalid('spec.namespace', spec.namespace, m));
  }
  if (spec.namespace && spec.namespaceSelector) {
    errors.push(forbidden('spec.namespaceSelector', 'namespace and namespaceSelector are mutually exclusive'));
  } else if (spec.namespaceSelector) {
    errors.push(...validateNonEmptySelector(spec.namespaceSelector, 'spec.namespaceSelector'));
  }
  return errors;
}

function validateEnum(value: string | undefined, path: string, allowed: readonly string[]): FieldError[] {
  return value !== undefined && !allowed.includes(value) ? [notSupported(path, value, allowed)] : [];
}

function validateUpdateStrategy(spec: SidecarSetSpec): FieldError[] {
  const path = 'spec.updateStrategy';
  const strategy = spec.updateStrategy ?? {};
  const errors = validateEnum(strategy.type, childPath(path, 'type'), SIDECARSET_UPDATE_STRATEGY_TYPES);
  const nativeSidecar = (spec.initContainers ?? []).findIndex((c) => c.restartPolicy === 'Always');
  if (nativeSidecar >= 0 && strategy.type === 'RollingUpdate') {
    errors.push(
      forbidden(
        childPath(path, 'type'),
        `initContainers[${nativeSidecar}] has restartPolicy Always and cannot be upgraded in place; set updateStrategy.type to NotUpdate`,
      ),
    );
  }
  if (strategy.type !== 'RollingUpdate') return errors;
  const partitionSet = strategy.partition !== undefined && strategy.partition !== 0;
  if (partitionSet && strategy.selector) {
    errors.push(forbidden(childPath(path, 'selector'), 'partition and selector cannot be used together'));
  }
  if (strategy.selector) errors.push(...validateNonEmptySelector(strategy.selector, childPath(path, 'selector')));
  errors.push(...validateIntOrPercent(strategy.partition, childPath(path, 'partition')));
  errors.push(...validateIntOrPercent(strategy.maxUnavailable, childPath(path, 'maxUnavailable')));
  errors.push(...validatePriorityStrategy(strategy.priorityStrategy, childPath(path, 'priorityStrategy')));
  errors.push(...validateScatterStrategy(strategy.scatterStrategy, childPath(path, 'scatterStrategy')));
  return errors;
}

function validateInjectionStrategy(spec: SidecarSetSpec): FieldError[] {
  const revision = spec.injectionStrategy?.revision;
  if (!revision) return [];
  const path = 'spec.injectionStrategy.revision';
  const errors = validateEnum(revision.policy, childPath(path, 'policy'), SIDECARSET_INJECT_REVISION_POLICIES);
  if (revision.revisionName === undefined && revision.customVersion === undefined) {
    errors.push(
      required(childPath(path, 'revisionName'), 'revisionName and customVersion cannot be empty simultaneously'),
    );
  }
  return errors;
}

/** The OpenKruise fields of one sidecar container: policies, resources policy, hot upgrade, transferEnv. */
function validateSidecarFields(container: SidecarContainer, path: string, init: boolean): FieldError[] {
  const errors = [
    ...validateShareVolumeDevicePolicy(container, path),
    ...validateResourcesPolicy(container, path, init),
    ...validateEnum(container.podInjectPolicy, childPath(path, 'podInjectPolicy'), POD_INJECT_POLICIES),
    ...validateEnum(
      container.shareVolumePolicy?.type,
      childPath(path, 'shareVolumePolicy.type'),
      SHARE_VOLUME_POLICY_TYPES,
    ),
    ...validateEnum(
      container.upgradeStrategy?.upgradeType,
      childPath(path, 'upgradeStrategy.upgradeType'),
      SIDECAR_UPGRADE_TYPES,
    ),
  ];
  if (container.upgradeStrategy?.upgradeType === 'HotUpgrade') {
    const at = childPath(path, 'upgradeStrategy.hotUpgradeEmptyImage');
    const image = container.upgradeStrategy.hotUpgradeEmptyImage ?? '';
    const parsed = parseImageReference(image);
    if (image === '') errors.push(required(at, 'HotUpgrade needs an image for the idle container'));
    else if (!parsed.ok) errors.push(invalid(at, image, `invalid image reference: ${parsed.reason}`));
  }
  (container.transferEnv ?? []).forEach((transfer, i) => {
    errors.push(...validateTransferEnv(transfer, indexPath(childPath(path, 'transferEnv'), i)));
  });
  return errors;
}

function validateContainers(spec: SidecarSetSpec): FieldError[] {
  const volumes = validateVolumes(spec.volumes ?? [], 'spec.volumes');
  const errors = [...volumes.errors];
  const initContainers = spec.initContainers ?? [];
  const containers = spec.containers ?? [];
  if (initContainers.length === 0 && containers.length === 0) {
    errors.push(required('spec.containers', 'no initContainer or container defined for SidecarSet'));
  }
  const names = new Set<string>();
  const lists = [
    ['spec.initContainers', initContainers, true],
    ['spec.containers', containers, false],
  ] as const;
  for (const [listPath, list, init] of lists) {
    list.forEach((container, i) => {
      const path = indexPath(listPath, i);
      errors.push(...validateContainer(container, path, { names, volumeNames: volumes.names, init }));
      errors.push(...validateSidecarFields(container, path, init));
    });
  }
  return errors;
}

/** Annotations to patch onto pods: non-empty, valid keys, each key once, known policies. */
function validatePatchPodMetadata(spec: SidecarSetSpec): FieldError[] {
  const errors: FieldError[] = [];
  const keys = new Set<string>();
  (spec.patchPodMetadata ?? []).forEach((patch, i) => {
    const path = indexPath('spec.patchPodMetadata', i);
    const annotations = patch.annotations ?? {};
    if (Object.keys(annotations).length === 0) {
      errors.push(required(childPath(path, 'annotations'), 'no annotations defined for SidecarSet'));
    }
    errors.push(...validateAnnotations(annotations, childPath(path, 'annotations')));
    errors.push(...validateEnum(patch.patchPolicy, childPath(path, 'patchPolicy'), SIDECARSET_PATCH_POLICIES));
    for (const [key, value] of Object.entries(annotations)) {
      const at = indexPath(childPath(path, 'annotations'), key);
      if (keys.has(key)) errors.push(duplicate(at, key));
      keys.add(key);
      if (patch.patchPolicy === 'MergePatchJson' && !isJsonObjectText(value)) {
        errors.push(invalid(at, value, 'must be a JSON object when patchPolicy is MergePatchJson'));
      }
    }
  });
  return errors;
}

function isJsonObjectText(text: string): boolean {
  try {
    return isRecord(JSON.parse(text));
  } catch {
    return false;
  }
}

/** The semantic rules, on a SidecarSet that passed the schema and was defaulted. */
export function validateDefaultedSidecarSet(sidecarSet: SidecarSet): FieldError[] {
  const { spec } = sidecarSet;
  return [
    ...validateMetadata(sidecarSet.metadata, { nameRules: sidecarSetNameRules }),
    ...validateScope(spec),
    ...validateInjectionStrategy(spec),
    ...validateUpdateStrategy(spec),
    ...validateContainers(spec),
    ...validatePatchPodMetadata(spec),
  ];
}

/**
 * Every problem with a SidecarSet document, as field errors; empty when OpenKruise would accept
 * it. Never throws, whatever the input.
 */
export function validateSidecarSet(document: unknown): FieldError[] {
  return validateObject(document, SIDECARSET_RULES);
}

/** How SidecarSets are checked, for the shared validation pipeline. */
export const SIDECARSET_RULES: KindRules<SidecarSet> = {
  kind: KruiseKind.SidecarSet,
  schema: SidecarSetSchema,
  defaults: defaultSidecarSet,
  semantic: validateDefaultedSidecarSet,
};
