/**
 * The AdmissionReview v1 envelope: parsing what the apiserver sends (malformed input is a
 * WEBHOOK_ERR_BAD_REVIEW, answered with HTTP 400 by the server) and building the response from a
 * handler's decision. Denials keep every field error as a Status cause so kubectl shows the path.
 */
import { formatFieldError, type FieldError } from '@flotilla/api';
import { AgentError } from '../../errors.js';
import { createJsonPatch } from './json-patch.js';
import type {
  AdmissionDecision,
  AdmissionRequest,
  AdmissionResponse,
  AdmissionReview,
  JsonPatchOperation,
  StatusCause,
} from './types.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const OPERATIONS = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

/** Parses a request body into its AdmissionRequest; throws WEBHOOK_ERR_BAD_REVIEW with the reason. */
export function parseAdmissionReview(body: string): AdmissionRequest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    throw new AgentError('WEBHOOK_ERR_BAD_REVIEW', 'request body is not JSON', { cause: err });
  }
  const bad = (why: string): never => {
    throw new AgentError('WEBHOOK_ERR_BAD_REVIEW', why);
  };
  if (!isObject(parsed)) return bad('request body is not a JSON object');
  if (parsed.apiVersion !== 'admission.k8s.io/v1' || parsed.kind !== 'AdmissionReview') {
    return bad(
      `expected apiVersion admission.k8s.io/v1 kind AdmissionReview, got ${String(parsed.apiVersion)} ${String(parsed.kind)}`,
    );
  }
  const request = parsed.request;
  if (!isObject(request)) return bad('AdmissionReview has no request');
  if (typeof request.uid !== 'string' || request.uid === '') return bad('request.uid is missing');
  if (typeof request.operation !== 'string' || !OPERATIONS.has(request.operation)) {
    return bad('request.operation is missing or unknown');
  }
  if (!isObject(request.kind) || !isObject(request.resource)) return bad('request.kind or request.resource is missing');
  return request as unknown as AdmissionRequest;
}

/** Wraps a decision into the response envelope for request `uid`. */
export function reviewResponse(uid: string, decision: AdmissionDecision): AdmissionReview {
  const response: AdmissionResponse = { uid, allowed: decision.allowed };
  if (decision.allowed) {
    if (decision.patch && decision.patch.length > 0) {
      response.patchType = 'JSONPatch';
      response.patch = Buffer.from(JSON.stringify(decision.patch)).toString('base64');
    }
    if (decision.warnings?.length) response.warnings = decision.warnings;
  } else {
    response.status = {
      code: decision.code,
      reason: decision.reason,
      message: decision.message,
      ...(decision.causes?.length ? { details: { causes: decision.causes } } : {}),
    };
  }
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

/** Allowed, unchanged. */
export function allow(warnings?: string[]): AdmissionDecision {
  return warnings?.length ? { allowed: true, warnings } : { allowed: true };
}

/** Allowed with the patch that turns `original` into `mutated` (no patch when equal). */
export function allowPatched(original: unknown, mutated: unknown): AdmissionDecision {
  const patch: JsonPatchOperation[] = createJsonPatch(original, mutated);
  return patch.length > 0 ? { allowed: true, patch } : { allowed: true };
}

/**
 * Denied as Invalid (422) with one cause per field error: the message names every field, the way
 * the apiserver words its own validation failures.
 */
export function denyInvalid(what: string, errors: readonly FieldError[]): AdmissionDecision {
  const causes: StatusCause[] = errors.map((e) => ({ reason: `Field${e.code}`, message: e.message, field: e.path }));
  const list = errors.map(formatFieldError);
  const message = `${what} is invalid: ${list.length === 1 ? list[0] : `[${list.join(', ')}]`}`;
  return { allowed: false, code: 422, reason: 'Invalid', message, causes };
}

/** Denied with a plain message (403 Forbidden by default, or e.g. 400/500). */
export function deny(message: string, code = 403, reason = 'Forbidden'): AdmissionDecision {
  return { allowed: false, code, reason, message };
}
