/**
 * The ContainerRecreateRequest defaulting webhook (OpenKruise v1.9's `mcontainerrecreaterequest`):
 * on CREATE the object defaults, then what only the pod can tell — the pod must exist, be active,
 * scheduled and on an existing node, the containers must exist with an id — and the CRR gets the
 * pod's labels, grace, preStop hooks and status context (api's containerRecreateRequestFromPod).
 * The pod and node are read live through `CrrPodReader` (from the main thread when the handlers
 * run in the admission thread): CRRs are rare, and a cache of every pod would cost far more.
 * UPDATEs go through the common defaulting (the validating webhook keeps the spec immutable).
 */
import {
  containerRecreateRequestFromPod,
  defaultContainerRecreateRequest,
  type ContainerRecreateRequest,
  type CrrSourcePod,
} from '@flotilla/api';
import { allowPatched, denyInvalid } from '../admission/review.js';
import type { AdmissionHandler } from '../admission/types.js';

/** A pod, and whether its node exists. */
export interface CrrPodLookup {
  pod?: CrrSourcePod;
  nodeExists: boolean;
}

export interface CrrPodReader {
  read(namespace: string, pod: string): Promise<CrrPodLookup>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The CREATE handler; anything else goes to `fallback`. */
export function crrDefaultingHandler(reader: CrrPodReader, fallback: AdmissionHandler): AdmissionHandler {
  return async (request) => {
    const object = request.object;
    if (request.operation !== 'CREATE' || !isObject(object) || !isObject(object.spec)) return fallback(request);
    const crr = object as unknown as ContainerRecreateRequest;
    const podName = crr.spec.podName;
    // Without a pod name or containers there is nothing to look up; validation names the field.
    if (typeof podName !== 'string' || !podName || !Array.isArray(crr.spec.containers)) return fallback(request);
    let defaulted: ContainerRecreateRequest;
    try {
      defaulted = defaultContainerRecreateRequest(crr);
    } catch {
      return fallback(request); // not schema-shaped: the validating webhook names the fields
    }
    const namespace = crr.metadata?.namespace ?? request.namespace ?? '';
    const { pod, nodeExists } = await reader.read(namespace, podName);
    const admitted = containerRecreateRequestFromPod(defaulted, pod, nodeExists);
    if (!admitted.ok) {
      return denyInvalid(
        `ContainerRecreateRequest.apps.kruise.io "${crr.metadata?.name ?? request.name ?? ''}"`,
        admitted.errors,
      );
    }
    return allowPatched(object, admitted.crr);
  };
}
