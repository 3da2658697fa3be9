/**
 * transferEnv: a sidecar copies env vars from another container of the pod, named directly or
 * through a downward-API field of the pod.
 */
import {
  childPath,
  type FieldError,
  forbidden,
  invalid,
  notSupported,
  required,
} from '../../validation/field-error.js';
import { qualifiedNameErrors } from '../../validation/names.js';
import type { ObjectFieldSelector } from '../common/meta.js';
import type { TransferEnvVar } from './schema.js';

/** The pod fields a source container name may come from (OpenKruise's downward-API subset). */
const FIELD_PATHS = ['metadata.annotations', 'metadata.labels', 'metadata.name'];
const SUBSCRIPTED = /^metadata\.(labels|annotations)\['(.*)'\]$/;

function validateFieldRef(fieldRef: ObjectFieldSelector, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (fieldRef.apiVersion !== undefined && fieldRef.apiVersion !== 'v1') {
    errors.push(notSupported(childPath(path, 'apiVersion'), fieldRef.apiVersion, ['v1']));
  }
  const fieldPath = childPath(path, 'fieldPath');
  if (fieldRef.fieldPath === '') return [...errors, required(fieldPath)];
  const subscripted = SUBSCRIPTED.exec(fieldRef.fieldPath);
  if (subscripted) {
    const [, map = '', key = ''] = subscripted;
    for (const m of qualifiedNameErrors(map === 'annotations' ? key.toLowerCase() : key)) {
      errors.push(invalid(fieldPath, key, m));
    }
  } else if (!FIELD_PATHS.includes(fieldRef.fieldPath)) {
    errors.push(notSupported(fieldPath, fieldRef.fieldPath, FIELD_PATHS));
  }
  return errors;
}

/** Exactly one source (name or downward API) and exactly one of envName / envNames. */
export function validateTransferEnv(transfer: TransferEnvVar, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const hasName = Boolean(transfer.sourceContainerName);
  const from = transfer.sourceContainerNameFrom;
  if (hasName && from) {
    errors.push(
      forbidden(childPath(path, 'sourceContainerNameFrom'), 'may not be set together with sourceContainerName'),
    );
  } else if (!hasName && !from) {
    errors.push(required(childPath(path, 'sourceContainerName'), 'set sourceContainerName or sourceContainerNameFrom'));
  }
  if (from) {
    const at = childPath(childPath(path, 'sourceContainerNameFrom'), 'fieldRef');
    if (!from.fieldRef) errors.push(required(at));
    else errors.push(...validateFieldRef(from.fieldRef, at));
  }
  const hasEnvName = Boolean(transfer.envName);
  const envNames = transfer.envNames ?? [];
  if (hasEnvName && envNames.length > 0) {
    errors.push(forbidden(childPath(path, 'envNames'), 'may not be set together with envName'));
  } else if (!hasEnvName && envNames.length === 0) {
    errors.push(required(childPath(path, 'envName'), 'set envName or envNames'));
  }
  envNames.forEach((name, i) => {
    if (name === '') errors.push(required(`${childPath(path, 'envNames')}[${i}]`));
  });
  return errors;
}
