/**
 * The pod-template rules OpenKruise gets from Kubernetes' ValidatePodTemplateSpec and
 * ValidatePodCreate that matter for workloads: container names, images, ports, env, volume
 * mounts, probes and volumes. The rest of a pod spec is left to the apiserver when pods are created.
 */
import {
  childPath,
  duplicate,
  type FieldError,
  forbidden,
  indexPath,
  invalid,
  notFound,
  notSupported,
  required,
} from '../../validation/field-error.js';
import { validateAnnotations, validateLabels } from '../../validation/labels.js';
import { dns1123LabelErrors, ianaServiceNameErrors } from '../../validation/names.js';
import type { Container, PodTemplateSpec, Volume } from './pod.js';

const IMAGE_PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const MAX_PORT = 65535;

/** What the containers of one pod share while they are validated. */
export interface ContainerContext {
  /** Names seen so far across init and regular containers; names must be unique in a pod. */
  readonly names: Set<string>;
  /** Volumes mounts may refer to. */
  readonly volumeNames: ReadonlySet<string>;
  readonly init: boolean;
}

/** Names must be DNS-1123 labels and unique; returns the set of names for mount checks. */
export function validateVolumes(
  volumes: readonly Volume[],
  path: string,
): { errors: FieldError[]; names: Set<string> } {
  const errors: FieldError[] = [];
  const names = new Set<string>();
  volumes.forEach((volume, i) => {
    const at = childPath(indexPath(path, i), 'name');
    if (volume.name === '') errors.push(required(at));
    else for (const m of dns1123LabelErrors(volume.name)) errors.push(invalid(at, volume.name, m));
    if (names.has(volume.name)) errors.push(duplicate(at, volume.name));
    names.add(volume.name);
  });
  return { errors, names };
}

function validatePorts(container: Container, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const names = new Set<string>();
  (container.ports ?? []).forEach((port, i) => {
    const at = indexPath(childPath(path, 'ports'), i);
    if (port.containerPort < 1 || port.containerPort > MAX_PORT) {
      errors.push(
        invalid(childPath(at, 'containerPort'), port.containerPort, `must be between 1 and ${MAX_PORT}, inclusive`),
      );
    }
    if (port.hostPort !== undefined && port.hostPort > MAX_PORT) {
      errors.push(invalid(childPath(at, 'hostPort'), port.hostPort, `must be between 0 and ${MAX_PORT}, inclusive`));
    }
    if (port.protocol !== undefined && !PROTOCOLS.includes(port.protocol)) {
      errors.push(notSupported(childPath(at, 'protocol'), port.protocol, PROTOCOLS));
    }
    if (port.name !== undefined && port.name !== '') {
      for (const m of ianaServiceNameErrors(port.name)) errors.push(invalid(childPath(at, 'name'), port.name, m));
      if (names.has(port.name)) errors.push(duplicate(childPath(at, 'name'), port.name));
      names.add(port.name);
    }
  });
  return errors;
}

function validateMounts(container: Container, path: string, volumeNames: ReadonlySet<string>): FieldError[] {
  const errors: FieldError[] = [];
  const mountPaths = new Set<string>();
  (container.volumeMounts ?? []).forEach((mount, i) => {
    const at = indexPath(childPath(path, 'volumeMounts'), i);
    if (mount.name === '') errors.push(required(childPath(at, 'name')));
    else if (!volumeNames.has(mount.name)) {
      errors.push(notFound(childPath(at, 'name'), mount.name, 'no volume of the pod has this name'));
    }
    if (mount.mountPath === '') errors.push(required(childPath(at, 'mountPath')));
    else if (mountPaths.has(mount.mountPath)) {
      errors.push(invalid(childPath(at, 'mountPath'), mount.mountPath, 'must be unique'));
    }
    mountPaths.add(mount.mountPath);
  });
  return errors;
}

function validateNameAndImage(container: Container, path: string, context: ContainerContext): FieldError[] {
  const errors: FieldError[] = [];
  const namePath = childPath(path, 'name');
  if (container.name === '') errors.push(required(namePath));
  else for (const m of dns1123LabelErrors(container.name)) errors.push(invalid(namePath, container.name, m));
  if (context.names.has(container.name)) errors.push(duplicate(namePath, container.name));
  context.names.add(container.name);

  const imagePath = childPath(path, 'image');
  if (container.image === undefined || container.image === '') errors.push(required(imagePath));
  else if (container.image.trim() !== container.image) {
    errors.push(invalid(imagePath, container.image, 'must not have leading or trailing whitespace'));
  }
  return errors;
}

function validatePolicies(container: Container, path: string, init: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const { imagePullPolicy, terminationMessagePolicy, restartPolicy } = container;
  if (imagePullPolicy !== undefined && !IMAGE_PULL_POLICIES.includes(imagePullPolicy)) {
    errors.push(notSupported(childPath(path, 'imagePullPolicy'), imagePullPolicy, IMAGE_PULL_POLICIES));
  }
  if (terminationMessagePolicy !== undefined && !TERMINATION_MESSAGE_POLICIES.includes(terminationMessagePolicy)) {
    errors.push(
      notSupported(childPath(path, 'terminationMessagePolicy'), terminationMessagePolicy, TERMINATION_MESSAGE_POLICIES),
    );
  }
  if (restartPolicy !== undefined && restartPolicy !== '') {
    if (!init) errors.push(forbidden(childPath(path, 'restartPolicy'), 'may not be set for non-init containers'));
    else if (restartPolicy !== 'Always')
      errors.push(notSupported(childPath(path, 'restartPolicy'), restartPolicy, ['Always']));
  }
  for (const probe of ['livenessProbe', 'startupProbe'] as const) {
    const threshold = container[probe]?.successThreshold;
    if (threshold !== undefined && threshold !== 0 && threshold !== 1) {
      errors.push(invalid(childPath(childPath(path, probe), 'successThreshold'), threshold, 'must be 1'));
    }
  }
  return errors;
}

/** One container of a pod (or a sidecar to be injected into one). */
export function validateContainer(container: Container, path: string, context: ContainerContext): FieldError[] {
  const errors = [
    ...validateNameAndImage(container, path, context),
    ...validatePolicies(container, path, context.init),
    ...validatePorts(container, path),
    ...validateMounts(container, path, context.volumeNames),
  ];
  (container.env ?? []).forEach((env, i) => {
    if (env.name === '') errors.push(required(childPath(indexPath(childPath(path, 'env'), i), 'name')));
  });
  return errors;
}

/**
 * A workload's pod template: labels and annotations, at least one container, unique container and
 * volume names, mounts that refer to volumes. `claimNames` are the volumeClaimTemplates, which
 * become volumes of every pod.
 */
export function validatePodTemplate(
  template: PodTemplateSpec,
  path: string,
  claimNames: readonly string[],
): FieldError[] {
  const metadataPath = childPath(path, 'metadata');
  const errors = [
    ...validateLabels(template.metadata?.labels ?? {}, childPath(metadataPath, 'labels')),
    ...validateAnnotations(template.metadata?.annotations ?? {}, childPath(metadataPath, 'annotations')),
  ];
  const specPath = childPath(path, 'spec');
  const spec = template.spec ?? {};
  const volumes = validateVolumes(spec.volumes ?? [], childPath(specPath, 'volumes'));
  errors.push(...volumes.errors);
  const context = { names: new Set<string>(), volumeNames: new Set([...volumes.names, ...claimNames]) };
  (spec.initContainers ?? []).forEach((c, i) => {
    errors.push(
      ...validateContainer(c, indexPath(childPath(specPath, 'initContainers'), i), { ...context, init: true }),
    );
  });
  const containers = spec.containers ?? [];
  if (containers.length === 0)
    errors.push(required(childPath(specPath, 'containers'), 'a pod needs at least one container'));
  containers.forEach((c, i) => {
    errors.push(...validateContainer(c, indexPath(childPath(specPath, 'containers'), i), { ...context, init: false }));
  });
  if (spec.dnsPolicy !== undefined && !DNS_POLICIES.includes(spec.dnsPolicy)) {
    errors.push(notSupported(childPath(specPath, 'dnsPolicy'), spec.dnsPolicy, DNS_POLICIES));
  }
  return errors;
}
