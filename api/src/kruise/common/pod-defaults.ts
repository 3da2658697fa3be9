/**
 * The Kubernetes defaults OpenKruise applies to pod templates before it stores them
 * (apis/apps/defaults/pod.go: SetDefaultPodSpec, built on k8s.io/kubernetes/pkg/apis/core/v1
 * SetDefaults_*). They are part of the stored template and so of the revision hash.
 *
 * These functions change the object they are given; callers pass a copy. Go treats "" and 0 as
 * unset for plain fields and nil as unset for pointers; the checks below follow each field's Go type.
 */
import { effectiveImageTag } from '../../validation/image-ref.js';
import { isRecord } from '../../validation/json.js';
import type { Container, PodSpec, Probe, ResourceList } from './pod.js';
import { roundResourceList } from './quantity-rounding.js';

const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;
/** 0644, the file mode of secret, configMap, downwardAPI and projected volumes. */
const DEFAULT_VOLUME_MODE = 0o644;
const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;

/** Which of the per-container defaults apply; they differ between containers, init containers and sidecars. */
export interface ContainerDefaultOptions {
  /** SetDefaults_Container: imagePullPolicy from the tag, termination message path and policy. */
  readonly kubernetesContainerDefaults: boolean;
  /** OpenKruise defaults startupProbe for pod-template containers but not for sidecars. */
  readonly startupProbe: boolean;
}

function isUnset(value: unknown): boolean {
  return value === undefined || value === null || value === '' || value === 0;
}

/** SetDefaults_Probe plus SetDefaults_HTTPGetAction for its handler. */
function defaultProbe(probe: Probe): void {
  if (isUnset(probe.timeoutSeconds)) probe.timeoutSeconds = 1;
  if (isUnset(probe.periodSeconds)) probe.periodSeconds = 10;
  if (isUnset(probe.successThreshold)) probe.successThreshold = 1;
  if (isUnset(probe.failureThreshold)) probe.failureThreshold = 3;
  defaultHttpGet(probe.httpGet);
}

/** SetDefaults_HTTPGetAction. */
function defaultHttpGet(action: unknown): void {
  if (!isRecord(action)) return;
  if (isUnset(action.path)) action.path = '/';
  if (isUnset(action.scheme)) action.scheme = 'HTTP';
}

/** SetDefaults_ObjectFieldSelector. */
export function defaultFieldRef(fieldRef: unknown): void {
  if (isRecord(fieldRef) && isUnset(fieldRef.apiVersion)) fieldRef.apiVersion = 'v1';
}

function roundListAt(holder: unknown, key: string): void {
  if (isRecord(holder) && isRecord(holder[key])) holder[key] = roundResourceList(holder[key] as ResourceList);
}

/** The defaults of one container, as SetDefaultPodSpec / setDefaultContainer apply them. */
export function defaultContainer(container: Container, options: ContainerDefaultOptions): void {
  if (options.kubernetesContainerDefaults) defaultKubernetesContainer(container);
  for (const port of container.ports ?? []) {
    if (isUnset(port.protocol)) port.protocol = 'TCP';
  }
  for (const env of container.env ?? []) defaultFieldRef(env.valueFrom?.fieldRef);
  roundListAt(container.resources, 'limits');
  roundListAt(container.resources, 'requests');
  defaultHandlers(container, options);
}

/** SetDefaults_Container. */
function defaultKubernetesContainer(container: Container): void {
  if (isUnset(container.imagePullPolicy)) {
    container.imagePullPolicy = effectiveImageTag(container.image ?? '') === 'latest' ? 'Always' : 'IfNotPresent';
  }
  if (isUnset(container.terminationMessagePath)) container.terminationMessagePath = '/dev/termination-log';
  if (isUnset(container.terminationMessagePolicy)) container.terminationMessagePolicy = 'File';
}

/** The container's probes and the HTTP actions of its lifecycle hooks. */
function defaultHandlers(container: Container, options: ContainerDefaultOptions): void {
  if (container.livenessProbe) defaultProbe(container.livenessProbe);
  if (container.readinessProbe) defaultProbe(container.readinessProbe);
  if (options.startupProbe && container.startupProbe) defaultProbe(container.startupProbe);
  defaultHttpGet(container.lifecycle?.postStart?.httpGet);
  defaultHttpGet(container.lifecycle?.preStop?.httpGet);
}

/** Every volume source of corev1.VolumeSource; a volume with none of them becomes an emptyDir. */
const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
];

function setIfUnset(holder: Record<string, unknown>, key: string, value: unknown, unset = isUnset): void {
  if (unset(holder[key])) holder[key] = value;
}

const isNil = (value: unknown): boolean => value === undefined || value === null;

function defaultDownwardApiItems(items: unknown): void {
  if (!Array.isArray(items)) return;
  for (const item of items) if (isRecord(item)) defaultFieldRef(item.fieldRef);
}

type Unset = (value: unknown) => boolean;

/**
 * The plain defaults of each volume source (SetDefaults_HostPathVolumeSource and the like): field,
 * value, and what counts as unset there (nil for a Go pointer, the zero value for a plain field).
 */
const SOURCE_DEFAULTS: Readonly<Record<string, ReadonlyArray<readonly [string, unknown, Unset]>>> = {
  hostPath: [['type', '', isNil]],
  secret: [['defaultMode', DEFAULT_VOLUME_MODE, isNil]],
  configMap: [['defaultMode', DEFAULT_VOLUME_MODE, isNil]],
  downwardAPI: [['defaultMode', DEFAULT_VOLUME_MODE, isNil]],
  projected: [['defaultMode', DEFAULT_VOLUME_MODE, isNil]],
  iscsi: [['iscsiInterface', 'default', isUnset]],
  rbd: [
    ['pool', 'rbd', isUnset],
    ['user', 'admin', isUnset],
    ['keyring', '/etc/ceph/keyring', isUnset],
  ],
  azureDisk: [
    ['cachingMode', 'ReadWrite', isNil],
    ['fsType', 'ext4', isNil],
    ['readOnly', false, isNil],
    ['kind', 'Shared', isNil],
  ],
  scaleIO: [
    ['storageMode', 'ThinProvisioned', isUnset],
    ['fsType', 'xfs', isUnset],
  ],
};

/** SetDefaults_Volume and the defaults of each volume source (SetDefaultPodVolumes). */
export function defaultVolume(volume: Record<string, unknown>): void {
  if (VOLUME_SOURCES.every((source) => isNil(volume[source]))) volume.emptyDir = {};
  for (const [source, defaults] of Object.entries(SOURCE_DEFAULTS)) {
    const holder = volume[source];
    if (!isRecord(holder)) continue;
    for (const [key, value, unset] of defaults) setIfUnset(holder, key, value, unset);
  }
  const { downwardAPI, projected } = volume;
  if (isRecord(downwardAPI)) defaultDownwardApiItems(downwardAPI.items);
  if (isRecord(projected)) defaultProjectedSources(projected.sources);
}

/** The downward API items and service account tokens of a projected volume. */
function defaultProjectedSources(sources: unknown): void {
  for (const source of Array.isArray(sources) ? sources : []) {
    if (!isRecord(source)) continue;
    if (isRecord(source.downwardAPI)) defaultDownwardApiItems(source.downwardAPI.items);
    if (isRecord(source.serviceAccountToken)) {
      setIfUnset(source.serviceAccountToken, 'expirationSeconds', DEFAULT_TOKEN_EXPIRATION_SECONDS, isNil);
    }
  }
}

/**
 * SetDefaultPodSpec: pod-level defaults, volumes, and containers. OpenKruise defaults
 * imagePullPolicy of regular containers to Always (so in-place image updates always pull), while
 * init containers get Kubernetes' rule (Always only for :latest or untagged images).
 */
export function defaultPodSpec(spec: PodSpec): void {
  setIfUnset(spec, 'dnsPolicy', 'ClusterFirst');
  setIfUnset(spec, 'restartPolicy', 'Always');
  setIfUnset(spec, 'securityContext', {}, isNil);
  setIfUnset(spec, 'terminationGracePeriodSeconds', DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS, isNil);
  setIfUnset(spec, 'schedulerName', 'default-scheduler');
  for (const volume of spec.volumes ?? []) defaultVolume(volume);
  for (const container of spec.initContainers ?? []) {
    defaultContainer(container, { kubernetesContainerDefaults: true, startupProbe: true });
  }
  for (const container of spec.containers ?? []) {
    if (isUnset(container.imagePullPolicy)) container.imagePullPolicy = 'Always';
    defaultContainer(container, { kubernetesContainerDefaults: true, startupProbe: true });
  }
  for (const container of spec.ephemeralContainers ?? []) {
    defaultContainer(container, { kubernetesContainerDefaults: false, startupProbe: true });
  }
  if (isRecord(spec.overhead)) spec.overhead = roundResourceList(spec.overhead);
}
