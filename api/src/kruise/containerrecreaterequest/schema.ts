/**
 * ContainerRecreateRequest (apps.kruise.io/v1alpha1, namespaced): a request to the node daemon to
 * recreate (stop, and let the kubelet start again) named containers of one pod without deleting
 * the pod, field for field as OpenKruise v1.9 defines it. The spec is immutable; `preStop`,
 * `ports` and `statusContext` of each container are filled by the webhook from the pod.
 */
import Type, { type Static } from 'typebox';
import type { KRUISE_API_VERSION, KruiseKind } from '../constants.js';
import { int32, int64, opaqueObject, strictObject, time } from '../common/markers.js';
import { ObjectMetaSchema } from '../common/meta.js';
import { ContainerPortSchema, HTTPGetActionSchema } from '../common/pod.js';

/** The container's preStop hook as the webhook copies it from the pod (exec, httpGet or tcpSocket). */
export const CrrProbeHandlerSchema = opaqueObject({
  exec: Type.Optional(opaqueObject({ command: Type.Optional(Type.Array(Type.String())) })),
  httpGet: Type.Optional(HTTPGetActionSchema),
  tcpSocket: Type.Optional(opaqueObject({})),
});

/** The container as it was when the request was made: a change of either means it was recreated. */
export const CrrContainerStatusContextSchema = strictObject({
  containerID: Type.String({ description: 'The container id from the pod status, e.g. containerd://<id>.' }),
  restartCount: int32({ description: 'The restart count from the pod status.' }),
});
export type CrrContainerStatusContext = Static<typeof CrrContainerStatusContextSchema>;

export const CrrContainerSchema = strictObject({
  name: Type.String({ description: 'Name of a container of the pod.' }),
  preStop: Type.Optional(CrrProbeHandlerSchema),
  ports: Type.Optional(Type.Array(ContainerPortSchema)),
  statusContext: Type.Optional(CrrContainerStatusContextSchema),
});
export type CrrContainer = Static<typeof CrrContainerSchema>;

export const CrrStrategySchema = strictObject({
  failurePolicy: Type.Optional(
    Type.String({ description: 'Fail (default): a failed container ends the request; Ignore: go on.' }),
  ),
  orderedRecreate: Type.Optional(
    Type.Boolean({ description: 'Recreate the next container only after the previous one is running and ready.' }),
  ),
  forceRecreate: Type.Optional(
    Type.Boolean({ description: 'Stop the container even while it is still starting or already restarting.' }),
  ),
  terminationGracePeriodSeconds: Type.Optional(
    int64({ description: 'Seconds the container gets to stop after preStop; default the pod’s.' }),
  ),
  unreadyGracePeriodSeconds: Type.Optional(
    int64({ description: 'Mark the pod not ready first and wait this long before stopping anything.' }),
  ),
  minStartedSeconds: Type.Optional(
    int32({ description: 'Seconds a recreated container must run and be ready to count as succeeded.' }),
  ),
});
export type CrrStrategy = Static<typeof CrrStrategySchema>;

export const CrrSpecSchema = strictObject(
  {
    podName: Type.String({ description: 'The pod, in the request’s namespace.' }),
    containers: Type.Array(CrrContainerSchema, { description: 'The containers to recreate.' }),
    strategy: Type.Optional(CrrStrategySchema),
    activeDeadlineSeconds: Type.Optional(
      int64({ description: 'Seconds after creation at which an unfinished request fails.' }),
    ),
    ttlSecondsAfterFinished: Type.Optional(int32({ description: 'Seconds after completion at which it is deleted.' })),
  },
  { description: 'Desired state of a ContainerRecreateRequest (immutable).' },
);
export type CrrSpec = Static<typeof CrrSpecSchema>;

export const CrrContainerRecreateStateSchema = strictObject({
  name: Type.String(),
  phase: Type.String({ description: 'Pending, Recreating, Succeeded or Failed.' }),
  message: Type.Optional(Type.String()),
  isKilled: Type.Optional(Type.Boolean({ description: 'The daemon has stopped this container.' })),
});
export type CrrContainerRecreateState = Static<typeof CrrContainerRecreateStateSchema>;

export const CrrStatusSchema = strictObject(
  {
    phase: Type.Optional(Type.String({ description: 'Pending, Recreating, Succeeded, Failed or Completed.' })),
    completionTime: Type.Optional(time()),
    message: Type.Optional(Type.String()),
    containerRecreateStates: Type.Optional(Type.Array(CrrContainerRecreateStateSchema)),
  },
  { description: 'Observed state of a ContainerRecreateRequest.' },
);
export type CrrStatus = Static<typeof CrrStatusSchema>;

export const ContainerRecreateRequestSchema = strictObject({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: CrrSpecSchema,
  status: Type.Optional(CrrStatusSchema),
});

export type ContainerRecreateRequest = Omit<Static<typeof ContainerRecreateRequestSchema>, 'apiVersion' | 'kind'> & {
  apiVersion: typeof KRUISE_API_VERSION;
  kind: typeof KruiseKind.ContainerRecreateRequest;
};
