/**
 * The hub's workload admission policy: Pod Security Standards *baseline* for every pod template
 * the hub distributes, plus Flotilla's own rule that no workload lands in a cluster's system
 * namespaces. Pure: the caller passes the workload as one cluster would get it (template with
 * that cluster's override merged) and the controls its exceptions allow.
 *
 * Baseline's controls and allowed values follow the Pod Security Standards (Kubernetes 1.36).
 * Restricted-only controls (runAsNonRoot, allowPrivilegeEscalation, dropping ALL capabilities,
 * volume types) are not checked. Values a pod could not even be created with (a string where a
 * boolean belongs) are refused too: only `false` or absence pass a boolean control.
 */
import { WORKLOAD_POLICY_CONTROLS, isRecord, type WorkloadPolicyControl } from '@flotilla/api';
import { overrideFieldPath, specForCluster } from './manifest.js';

export const POLICY_CONTROLS = WORKLOAD_POLICY_CONTROLS;
export type PolicyControl = WorkloadPolicyControl;

/** Where each control comes from, as messages name it. */
export const CONTROL_TITLES: Record<PolicyControl, string> = {
  hostProcess: 'Pod Security Standards baseline: HostProcess',
  hostNamespaces: 'Pod Security Standards baseline: Host Namespaces',
  privileged: 'Pod Security Standards baseline: Privileged Containers',
  capabilities: 'Pod Security Standards baseline: Capabilities',
  hostPathVolumes: 'Pod Security Standards baseline: HostPath Volumes',
  hostPorts: 'Pod Security Standards baseline: Host Ports',
  appArmor: 'Pod Security Standards baseline: AppArmor',
  seLinux: 'Pod Security Standards baseline: SELinux',
  procMount: 'Pod Security Standards baseline: /proc Mount Type',
  seccomp: 'Pod Security Standards baseline: Seccomp',
  sysctls: 'Pod Security Standards baseline: Sysctls',
  systemNamespaces: 'Flotilla workload policy: System Namespaces',
};

export interface PolicyViolation {
  /** The field, e.g. `spec.template.spec.containers[0].securityContext.privileged`. */
  path: string;
  control: PolicyControl;
  message: string;
}

/** Capabilities baseline lets containers add (the container runtime's default set). */
export const BASELINE_CAPABILITIES: ReadonlySet<string> = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

/** Sysctls baseline allows (namespaced and isolated from other pods). */
export const BASELINE_SYSCTLS: ReadonlySet<string> = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);

const SELINUX_TYPES: ReadonlySet<string> = new Set([
  '',
  'container_t',
  'container_init_t',
  'container_kvm_t',
  'container_engine_t',
]);
const APPARMOR_TYPES: ReadonlySet<string> = new Set(['RuntimeDefault', 'Localhost']);
const APPARMOR_ANNOTATION = 'container.apparmor.security.beta.kubernetes.io/';
const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION = 'container.seccomp.security.alpha.kubernetes.io/';

/** Namespaces carry this label, set by kube-apiserver to their name. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

type Out = PolicyViolation[];

function add(out: Out, path: string, control: PolicyControl, problem: string): void {
  out.push({ path, control, message: `${problem} (${CONTROL_TITLES[control]}; control ${control})` });
}

const field = (v: unknown, key: string): unknown => (isRecord(v) && Object.hasOwn(v, key) ? v[key] : undefined);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const isSet = (v: unknown): boolean => v !== undefined && v !== null;
/** Baseline's boolean controls allow only absence or false. */
const notFalse = (v: unknown): boolean => isSet(v) && v !== false;
const json = (v: unknown): string => JSON.stringify(v) ?? String(v);

/** Checks shared by a pod's and a container's securityContext. */
function securityContextViolations(sc: unknown, path: string, out: Out): void {
  if (!isSet(sc)) return;
  if (notFalse(field(field(sc, 'windowsOptions'), 'hostProcess'))) {
    add(out, `${path}.windowsOptions.hostProcess`, 'hostProcess', 'must be unset or false');
  }
  const seLinux = field(sc, 'seLinuxOptions');
  const seType = field(seLinux, 'type');
  if (isSet(seType) && !(typeof seType === 'string' && SELINUX_TYPES.has(seType))) {
    add(out, `${path}.seLinuxOptions.type`, 'seLinux', `${json(seType)} is not an allowed SELinux type`);
  }
  for (const key of ['user', 'role'] as const) {
    const v = field(seLinux, key);
    if (isSet(v) && v !== '') add(out, `${path}.seLinuxOptions.${key}`, 'seLinux', 'must be unset or empty');
  }
  const appArmor = field(field(sc, 'appArmorProfile'), 'type');
  if (isSet(appArmor) && !(typeof appArmor === 'string' && APPARMOR_TYPES.has(appArmor))) {
    add(out, `${path}.appArmorProfile.type`, 'appArmor', `must be RuntimeDefault or Localhost, not ${json(appArmor)}`);
  }
  const seccomp = field(field(sc, 'seccompProfile'), 'type');
  if (seccomp === 'Unconfined' || (isSet(seccomp) && typeof seccomp !== 'string')) {
    add(out, `${path}.seccompProfile.type`, 'seccomp', `must not be ${json(seccomp)}`);
  }
}

/** One container (app, init, ephemeral or a SidecarSet's sidecar). */
function containerViolations(container: unknown, path: string, out: Out): void {
  const sc = field(container, 'securityContext');
  const scPath = `${path}.securityContext`;
  if (notFalse(field(sc, 'privileged'))) add(out, `${scPath}.privileged`, 'privileged', 'must be unset or false');
  const added = field(field(sc, 'capabilities'), 'add');
  if (isSet(added) && !Array.isArray(added)) {
    add(out, `${scPath}.capabilities.add`, 'capabilities', 'must be a list of baseline capabilities');
  }
  list(added).forEach((cap, i) => {
    if (!(typeof cap === 'string' && BASELINE_CAPABILITIES.has(cap))) {
      add(out, `${scPath}.capabilities.add[${i}]`, 'capabilities', `${json(cap)} is not in the baseline set`);
    }
  });
  const procMount = field(sc, 'procMount');
  if (isSet(procMount) && procMount !== 'Default') {
    add(out, `${scPath}.procMount`, 'procMount', `must be unset or Default, not ${json(procMount)}`);
  }
  securityContextViolations(sc, scPath, out);
  list(field(container, 'ports')).forEach((port, i) => {
    const hostPort = field(port, 'hostPort');
    if (isSet(hostPort) && hostPort !== 0) {
      add(out, `${path}.ports[${i}].hostPort`, 'hostPorts', `must be unset or 0, not ${json(hostPort)}`);
    }
  });
}

const CONTAINER_LISTS = ['initContainers', 'containers', 'ephemeralContainers'] as const;

function containerListsViolations(holder: unknown, path: string, out: Out): void {
  for (const key of CONTAINER_LISTS) {
    list(field(holder, key)).forEach((c, i) => containerViolations(c, `${path}.${key}[${i}]`, out));
  }
}

function volumeViolations(volumes: unknown, path: string, out: Out): void {
  list(volumes).forEach((v, i) => {
    if (isSet(field(v, 'hostPath'))) add(out, `${path}[${i}].hostPath`, 'hostPathVolumes', 'must be unset');
  });
}

/** AppArmor and seccomp as pod annotations (older clusters read them). */
function podAnnotationViolations(annotations: unknown, path: string, out: Out): void {
  if (!isRecord(annotations)) return;
  for (const [key, value] of Object.entries(annotations)) {
    const at = `${path}[${key}]`;
    if (key.startsWith(APPARMOR_ANNOTATION)) {
      const ok = value === 'runtime/default' || (typeof value === 'string' && value.startsWith('localhost/'));
      if (!ok) add(out, at, 'appArmor', `must be runtime/default or localhost/*, not ${json(value)}`);
    } else if (
      (key === SECCOMP_POD_ANNOTATION || key.startsWith(SECCOMP_CONTAINER_ANNOTATION)) &&
      value === 'unconfined'
    ) {
      add(out, at, 'seccomp', 'must not be unconfined');
    }
  }
}

/** A whole pod spec (a CloneSet's `spec.template.spec`). */
export function podSpecViolations(spec: unknown, path: string): PolicyViolation[] {
  const out: Out = [];
  for (const key of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
    if (notFalse(field(spec, key))) add(out, `${path}.${key}`, 'hostNamespaces', 'must be unset or false');
  }
  const sc = field(spec, 'securityContext');
  securityContextViolations(sc, `${path}.securityContext`, out);
  list(field(sc, 'sysctls')).forEach((s, i) => {
    const name = field(s, 'name');
    if (!(typeof name === 'string' && BASELINE_SYSCTLS.has(name))) {
      add(out, `${path}.securityContext.sysctls[${i}].name`, 'sysctls', `${json(name)} is not an allowed sysctl`);
    }
  });
  containerListsViolations(spec, path, out);
  volumeViolations(field(spec, 'volumes'), `${path}.volumes`, out);
  return out;
}

/**
 * Whether a namespace selector can never match namespace `name`, whatever its other labels:
 * it pins kubernetes.io/metadata.name to other values.
 */
export function selectorExcludesNamespace(selector: unknown, name: string): boolean {
  const pinned = field(field(selector, 'matchLabels'), NAMESPACE_NAME_LABEL);
  if (typeof pinned === 'string' && pinned !== name) return true;
  return list(field(selector, 'matchExpressions')).some((e) => {
    if (field(e, 'key') !== NAMESPACE_NAME_LABEL) return false;
    const values = list(field(e, 'values'));
    switch (field(e, 'operator')) {
      case 'In':
        return !values.includes(name);
      case 'NotIn':
        return values.includes(name);
      case 'DoesNotExist':
        return true;
      default:
        return false;
    }
  });
}

/**
 * A SidecarSet's sidecars run in every pod it selects, in any namespace it may reach: its scope
 * must keep it out of the system namespaces.
 */
function sidecarSetScopeViolations(spec: unknown, system: ReadonlySet<string>, out: Out): void {
  const namespace = field(spec, 'namespace');
  if (typeof namespace === 'string' && namespace !== '') {
    if (system.has(namespace)) {
      add(out, 'spec.namespace', 'systemNamespaces', `${namespace} is a system namespace`);
    }
    return;
  }
  const selector = field(spec, 'namespaceSelector');
  const reachable = [...system].filter((ns) => !selectorExcludesNamespace(selector, ns));
  if (reachable.length > 0) {
    add(
      out,
      isSet(selector) ? 'spec.namespaceSelector' : 'spec.namespace',
      'systemNamespaces',
      `the SidecarSet may inject into the system namespaces ${reachable.join(', ')}: set spec.namespace, or a ` +
        `spec.namespaceSelector on ${NAMESPACE_NAME_LABEL} that excludes them`,
    );
  }
}

export interface PolicyTarget {
  kind: string;
  /** '' for cluster-scoped kinds. */
  namespace: string;
  /** The spec as one cluster gets it (template with that cluster's override applied). */
  spec: unknown;
}

/** Every violation of one workload, before exceptions. */
export function workloadViolations(target: PolicyTarget, systemNamespaces: ReadonlySet<string>): PolicyViolation[] {
  const out: Out = [];
  if (systemNamespaces.has(target.namespace)) {
    add(out, 'namespace', 'systemNamespaces', `${target.namespace} is a system namespace`);
  }
  const { spec } = target;
  switch (target.kind) {
    case 'CloneSet':
    case 'StatefulSet':
    case 'BroadcastJob':
    case 'DaemonSet': {
      const template = field(spec, 'template');
      podAnnotationViolations(
        field(field(template, 'metadata'), 'annotations'),
        'spec.template.metadata.annotations',
        out,
      );
      out.push(...podSpecViolations(field(template, 'spec'), 'spec.template.spec'));
      break;
    }
    case 'SidecarSet':
      sidecarSetScopeViolations(spec, systemNamespaces, out);
      containerListsViolations(spec, 'spec', out);
      volumeViolations(field(spec, 'volumes'), 'spec.volumes', out);
      list(field(spec, 'patchPodMetadata')).forEach((p, i) =>
        podAnnotationViolations(field(p, 'annotations'), `spec.patchPodMetadata[${i}].annotations`, out),
      );
      break;
    default:
      // ImagePullJob makes no pods of its own; only its namespace matters (its pull secrets live there).
      break;
  }
  return out;
}

/** Drops the violations of controls an exception allows. */
export function unexcepted(
  violations: readonly PolicyViolation[],
  allowed: ReadonlySet<PolicyControl>,
): PolicyViolation[] {
  return violations.filter((v) => !allowed.has(v.control));
}

export interface PolicyContent {
  spec: Record<string, unknown>;
  /** Per cluster name, a merge patch of the spec. */
  overrides: Readonly<Record<string, Record<string, unknown>>>;
}

/**
 * What the policy refuses of a workload as every cluster would get it: the template's violations
 * with their `spec.` paths, then those an override adds for its cluster, named in the override
 * (`overrides.c1.template.spec.hostPID`). Violations of allowed controls are dropped.
 */
export function effectiveViolations(
  target: Omit<PolicyTarget, 'spec'>,
  content: PolicyContent,
  systemNamespaces: ReadonlySet<string>,
  allowed: ReadonlySet<PolicyControl>,
): PolicyViolation[] {
  const check = (spec: unknown): PolicyViolation[] =>
    unexcepted(workloadViolations({ ...target, spec }, systemNamespaces), allowed);
  const template = check(content.spec);
  const seen = new Set(template.map((v) => `${v.control}\u0000${v.path}`));
  const out = [...template];
  for (const cluster of Object.keys(content.overrides)) {
    for (const v of check(specForCluster(content, cluster))) {
      if (seen.has(`${v.control}\u0000${v.path}`)) continue;
      out.push({ ...v, path: overrideFieldPath(cluster, v.path) });
    }
  }
  return out;
}
