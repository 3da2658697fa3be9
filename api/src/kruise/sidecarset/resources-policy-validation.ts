/**
 * Validation of a sidecar's v1.9 `resourcesPolicy` and `shareVolumeDevicePolicy`, with OpenKruise's
 * messages (pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go): no fixed
 * `resources` beside a policy, a usable regex, at least one of limits/requests, every expression
 * evaluable (with its field's variable, cpu or memory, bound to 1), and on init containers only
 * native sidecars.
 */
import {
  childPath,
  type FieldError,
  forbidden,
  invalid,
  notSupported,
  required,
} from '../../validation/field-error.js';
import { SHARE_VOLUME_POLICY_TYPES } from '../constants.js';
import { evaluateResourceExpr, ResourceExprError } from './resources-expr.js';
import type { SidecarContainer } from './schema.js';

const hasEntries = (list: unknown): boolean =>
  typeof list === 'object' && list !== null && Object.keys(list).length > 0;

export function validateShareVolumeDevicePolicy(container: SidecarContainer, path: string): FieldError[] {
  const type = container.shareVolumeDevicePolicy?.type;
  const at = childPath(path, 'shareVolumeDevicePolicy.type');
  return type !== undefined && !(SHARE_VOLUME_POLICY_TYPES as readonly string[]).includes(type)
    ? [notSupported(at, type, SHARE_VOLUME_POLICY_TYPES)]
    : [];
}

export function validateResourcesPolicy(container: SidecarContainer, path: string, init: boolean): FieldError[] {
  const policy = container.resourcesPolicy;
  if (!policy) return [];
  const at = childPath(path, 'resourcesPolicy');
  const errors: FieldError[] = [];
  if (init && container.restartPolicy !== 'Always') {
    errors.push(forbidden(at, 'resourcesPolicy is only supported for containers with RestartPolicy Always'));
  }
  const resources = container.resources as { limits?: unknown; requests?: unknown } | undefined;
  if (hasEntries(resources?.limits) || hasEntries(resources?.requests)) {
    errors.push(forbidden(at, 'resourcesPolicy and resources cannot be configured together'));
  }
  if (policy.targetContainersMode !== 'sum' && policy.targetContainersMode !== 'max') {
    errors.push(notSupported(childPath(at, 'targetContainersMode'), policy.targetContainersMode, ['sum', 'max']));
  }
  errors.push(...validateRegex(policy.targetContainersNameRegex, childPath(at, 'targetContainersNameRegex')));
  errors.push(...validateExpressions(policy.resourcesExpr, childPath(at, 'resourcesExpr')));
  return errors;
}

type ResourcesExpr = NonNullable<SidecarContainer['resourcesPolicy']>['resourcesExpr'];

/** At least one of limits/requests, and each expression evaluable with its variable bound to 1. */
function validateExpressions(resourcesExpr: ResourcesExpr | undefined, at: string): FieldError[] {
  const { limits, requests } = resourcesExpr ?? {};
  const errors: FieldError[] = [];
  if (!hasEntries(limits) && !hasEntries(requests)) {
    errors.push(required(at, 'at least one of limits or requests must be configured'));
  }
  for (const [kind, exprs] of [
    ['limits', limits],
    ['requests', requests],
  ] as const) {
    for (const resource of ['cpu', 'memory'] as const) {
      const expr = exprs?.[resource];
      if (expr) errors.push(...validateExpression(expr, resource, childPath(at, `${kind}.${resource}`)));
    }
  }
  return errors;
}

function validateRegex(regex: string | undefined, at: string): FieldError[] {
  if (regex === undefined) return [];
  if (regex === '') return [invalid(at, regex, 'invalid empty regex')];
  try {
    new RegExp(regex, 'u');
    return [];
  } catch (err) {
    return [invalid(at, regex, `invalid regex pattern: ${(err as Error).message}`)];
  }
}

/** As OpenKruise checks it: the field's own variable (cpu or memory) bound to the number 1. */
function validateExpression(expr: string, variable: 'cpu' | 'memory', at: string): FieldError[] {
  try {
    evaluateResourceExpr(expr, { [variable]: { number: 1 } });
    return [];
  } catch (err) {
    if (err instanceof ResourceExprError) return [invalid(at, expr, `invalid expression: ${err.message}`)];
    throw err;
  }
}
