/**
 * Validating webhooks of the Kruise kinds (OpenKruise v1.9's paths, registry.ts): the api
 * package's rules on CREATE, its update rules on UPDATE, plus checks that need the cluster (given
 * as `extra`, e.g. SidecarSet name clashes and the patchPodMetadata whitelist). Objects come at
 * either served version; v1beta1 ones are judged as their v1alpha1 conversion, as OpenKruise v1.9
 * converts before validating. A denial carries every field path and message.
 */
import {
  asV1alpha1Document,
  KruiseResources,
  validateKruiseObject,
  validateKruiseObjectUpdate,
  type FieldError,
  type KruiseKindName,
} from '@flotilla/api';
import { allow, deny, denyInvalid } from '../admission/review.js';
import type { AdmissionHandler } from '../admission/types.js';

/** Cluster-dependent checks of a (schema-valid, defaulted) object. */
export type ExtraValidation = (object: unknown, oldObject: unknown) => FieldError[] | Promise<FieldError[]>;

const nameOf = (o: unknown): string => {
  const name = (o as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
  return typeof name === 'string' ? name : '';
};

/** The v1alpha1 form of a (valid) object of either version, for the cluster checks written for it. */
function asV1alpha1(object: unknown): unknown {
  const converted = asV1alpha1Document(object);
  return converted.ok ? converted.document : object;
}

export function kruiseValidatingHandler(kind: KruiseKindName, extra?: ExtraValidation): AdmissionHandler {
  return async (request) => {
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
    const object = request.object;
    if (object === undefined) return deny('the request has no object', 400, 'BadRequest');
    const errors =
      request.operation === 'CREATE'
        ? validateKruiseObject(object)
        : validateKruiseObjectUpdate(object, request.oldObject);
    if (errors.length === 0 && extra) errors.push(...(await extra(asV1alpha1(object), asV1alpha1(request.oldObject))));
    if (errors.length === 0) return allow();
    return denyInvalid(`${kind}.${KruiseResources[kind].group} "${nameOf(object) || request.name || ''}"`, errors);
  };
}
