/**
 * ContainerRecreateRequest defaults that need nothing but the object (OpenKruise v1.9's mutating
 * webhook sets them on CREATE): an empty strategy and failurePolicy Fail. The pod-derived ones
 * (labels, termination grace, preStop, ports, statusContext) are applied by fromPod.ts.
 */
import { cloneJson } from '../../validation/json.js';
import type { ContainerRecreateRequest } from './schema.js';

/** A copy of the CRR with the object-only defaults applied. Idempotent. */
export function defaultContainerRecreateRequest(crr: ContainerRecreateRequest): ContainerRecreateRequest {
  const out = cloneJson(crr);
  const strategy = (out.spec.strategy ??= {});
  if (!strategy.failurePolicy) strategy.failurePolicy = 'Fail';
  return out;
}
