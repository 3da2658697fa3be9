/**
 * The parts of core/v1 pod templates that Kruise kinds embed. OpenKruise's CRDs keep these
 * schemaless (`x-kubernetes-preserve-unknown-fields`), so they are opaque objects here: the fields
 * below are type-checked and typed for defaulting and validation, any other Kubernetes field is
 * accepted as it is.
 */
import Type, { type Static } from 'typebox';
import { int32, int64, intOrString, type Opaque, opaqueObject, stringList, stringMap, time } from './markers.js';

/** resource.Quantity as JSON: "500m", "1Gi", or a bare number. */
export const QuantitySchema = Type.Union([Type.String(), Type.Number()]);
export type Quantity = Static<typeof QuantitySchema>;

/** corev1.ResourceList: resource name → quantity. */
export const ResourceListSchema = Type.Unsafe<Record<string, Quantity>>({
  type: 'object',
  additionalProperties: QuantitySchema,
});
export type ResourceList = Static<typeof ResourceListSchema>;

/** corev1.ResourceRequirements. */
export const ResourceRequirementsSchema = opaqueObject({
  limits: Type.Optional(ResourceListSchema),
  requests: Type.Optional(ResourceListSchema),
});

/** corev1.ObjectFieldSelector inside templates. */
const FieldRefSchema = opaqueObject({ apiVersion: Type.Optional(Type.String()), fieldPath: Type.String() });

/** corev1.EnvVar. */
export const EnvVarSchema = opaqueObject({
  name: Type.String(),
  value: Type.Optional(Type.String()),
  valueFrom: Type.Optional(opaqueObject({ fieldRef: Type.Optional(FieldRefSchema) })),
});
export type EnvVar = Opaque<Static<typeof EnvVarSchema>>;

/** corev1.ContainerPort. */
export const ContainerPortSchema = opaqueObject({
  name: Type.Optional(Type.String()),
  containerPort: int32(),
  hostPort: Type.Optional(int32()),
  hostIP: Type.Optional(Type.String()),
  protocol: Type.Optional(Type.String()),
});
export type ContainerPort = Opaque<Static<typeof ContainerPortSchema>>;

/** corev1.HTTPGetAction. */
export const HTTPGetActionSchema = opaqueObject({
  path: Type.Optional(Type.String()),
  port: intOrString(),
  host: Type.Optional(Type.String()),
  scheme: Type.Optional(Type.String()),
});

/** corev1.Probe (its handler inline). */
export const ProbeSchema = opaqueObject({
  httpGet: Type.Optional(HTTPGetActionSchema),
  initialDelaySeconds: Type.Optional(int32()),
  timeoutSeconds: Type.Optional(int32()),
  periodSeconds: Type.Optional(int32()),
  successThreshold: Type.Optional(int32()),
  failureThreshold: Type.Optional(int32()),
  terminationGracePeriodSeconds: Type.Optional(int64()),
});
export type Probe = Opaque<Static<typeof ProbeSchema>>;

/** corev1.LifecycleHandler. */
const LifecycleHandlerSchema = opaqueObject({ httpGet: Type.Optional(HTTPGetActionSchema) });

/** corev1.Lifecycle (container postStart/preStop hooks, not Kruise's pod lifecycle hooks). */
export const ContainerLifecycleSchema = opaqueObject({
  postStart: Type.Optional(LifecycleHandlerSchema),
  preStop: Type.Optional(LifecycleHandlerSchema),
});

/** corev1.VolumeMount. */
export const VolumeMountSchema = opaqueObject({ name: Type.String(), mountPath: Type.String() });

/** The fields of corev1.Container that defaulting and validation read. */
export const containerProperties = {
  name: Type.String(),
  image: Type.Optional(Type.String()),
  command: Type.Optional(stringList()),
  args: Type.Optional(stringList()),
  workingDir: Type.Optional(Type.String()),
  ports: Type.Optional(Type.Array(ContainerPortSchema)),
  env: Type.Optional(Type.Array(EnvVarSchema)),
  resources: Type.Optional(ResourceRequirementsSchema),
  volumeMounts: Type.Optional(Type.Array(VolumeMountSchema)),
  livenessProbe: Type.Optional(ProbeSchema),
  readinessProbe: Type.Optional(ProbeSchema),
  startupProbe: Type.Optional(ProbeSchema),
  lifecycle: Type.Optional(ContainerLifecycleSchema),
  terminationMessagePath: Type.Optional(Type.String()),
  terminationMessagePolicy: Type.Optional(Type.String()),
  imagePullPolicy: Type.Optional(Type.String()),
  restartPolicy: Type.Optional(Type.String()),
  stdin: Type.Optional(Type.Boolean()),
  stdinOnce: Type.Optional(Type.Boolean()),
  tty: Type.Optional(Type.Boolean()),
};

/** corev1.Container. */
export const ContainerSchema = opaqueObject(containerProperties);
export type Container = Opaque<Static<typeof ContainerSchema>>;

/** corev1.Volume: a name plus exactly one volume source, kept opaque. */
export const VolumeSchema = opaqueObject({ name: Type.String() });
export type Volume = Opaque<Static<typeof VolumeSchema>>;

/** The fields of corev1.PodSpec that defaulting and validation read. */
export const PodSpecSchema = opaqueObject({
  containers: Type.Optional(Type.Array(ContainerSchema)),
  initContainers: Type.Optional(Type.Array(ContainerSchema)),
  ephemeralContainers: Type.Optional(Type.Array(ContainerSchema)),
  volumes: Type.Optional(Type.Array(VolumeSchema)),
  restartPolicy: Type.Optional(Type.String()),
  terminationGracePeriodSeconds: Type.Optional(int64()),
  activeDeadlineSeconds: Type.Optional(int64()),
  dnsPolicy: Type.Optional(Type.String()),
  schedulerName: Type.Optional(Type.String()),
  securityContext: Type.Optional(opaqueObject({})),
  nodeSelector: Type.Optional(stringMap()),
  serviceAccountName: Type.Optional(Type.String()),
  hostNetwork: Type.Optional(Type.Boolean()),
  overhead: Type.Optional(ResourceListSchema),
});
export type PodSpec = Opaque<Static<typeof PodSpecSchema>>;

/** The metadata of a pod template; `creationTimestamp: null` is how Go writes an unset time. */
export const TemplateMetadataSchema = opaqueObject({
  name: Type.Optional(Type.String()),
  labels: Type.Optional(stringMap()),
  annotations: Type.Optional(stringMap()),
  creationTimestamp: Type.Optional(Type.Union([time(), Type.Null()])),
});
export type TemplateMetadata = Opaque<Static<typeof TemplateMetadataSchema>>;

/** corev1.PodTemplateSpec. */
export const PodTemplateSpecSchema = opaqueObject({
  metadata: Type.Optional(TemplateMetadataSchema),
  spec: Type.Optional(PodSpecSchema),
});
export type PodTemplateSpec = Opaque<Static<typeof PodTemplateSpecSchema>>;

/** corev1.PersistentVolumeClaim as a claim template. */
export const PersistentVolumeClaimTemplateSchema = opaqueObject({
  apiVersion: Type.Optional(Type.String()),
  kind: Type.Optional(Type.String()),
  metadata: Type.Optional(TemplateMetadataSchema),
  spec: Type.Optional(
    opaqueObject({
      accessModes: Type.Optional(stringList()),
      storageClassName: Type.Optional(Type.String()),
      volumeMode: Type.Optional(Type.String()),
      resources: Type.Optional(ResourceRequirementsSchema),
    }),
  ),
  status: Type.Optional(
    opaqueObject({ phase: Type.Optional(Type.String()), capacity: Type.Optional(ResourceListSchema) }),
  ),
});
export type PersistentVolumeClaimTemplate = Opaque<Static<typeof PersistentVolumeClaimTemplateSchema>>;
