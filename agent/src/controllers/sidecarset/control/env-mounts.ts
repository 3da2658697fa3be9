/**
 * What a sidecar takes from the pod it joins: env vars named by `transferEnv` (from a container
 * named directly or through a pod label/annotation), and, with shareVolumePolicy enabled, the
 * volume mounts of the pod's app containers plus the env vars their `subPathExpr` expands.
 */
import { ENV_SIDECAR_INJECTED, type SidecarContainer } from '@flotilla/api';
import type { Container, EnvVar } from '@flotilla/api';
import type { MutablePod, VolumeMount } from '../../../kube/types.js';

const SUBPATH_EXPR_ENV = /\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)/g;
const SUBSCRIPTED = /^metadata\.(labels|annotations)\['(.*)'\]$/;

/** True for a container the webhook injected (it carries IS_INJECTED=true). */
export function isInjectedContainer(container: Container): boolean {
  return (container.env ?? []).some((e) => e.name === ENV_SIDECAR_INJECTED && e.value === 'true');
}

/** The container named by a downward-API field path (`metadata.labels['k']`), or undefined. */
export function containerNameFromFieldPath(fieldPath: string, pod: MutablePod): string | undefined {
  const m = SUBSCRIPTED.exec(fieldPath);
  if (!m) return undefined;
  const map = m[1] === 'labels' ? pod.metadata?.labels : pod.metadata?.annotations;
  return map?.[m[2]!];
}

/** The env vars `transferEnv` copies into `sidecar` from the pod's containers; missing ones are skipped. */
export function transferEnvs(sidecar: SidecarContainer, pod: MutablePod): EnvVar[] {
  const byKey = new Map<string, EnvVar>();
  for (const c of pod.spec?.containers ?? []) for (const e of c.env ?? []) byKey.set(`${c.name}/${e.name}`, e);
  const out: EnvVar[] = [];
  for (const t of sidecar.transferEnv ?? []) {
    const source = transferSource(t, pod);
    if (source === undefined) continue;
    for (const name of transferNames(t)) {
      const env = byKey.get(`${source}/${name}`);
      if (env) out.push(env);
    }
  }
  return out;
}

type TransferEnv = NonNullable<SidecarContainer['transferEnv']>[number];

/** The container a transferEnv entry copies from: named, or through a pod label/annotation. */
function transferSource(t: TransferEnv, pod: MutablePod): string | undefined {
  const fieldPath = t.sourceContainerNameFrom?.fieldRef?.fieldPath;
  return fieldPath !== undefined ? containerNameFromFieldPath(fieldPath, pod) : t.sourceContainerName;
}

/** The env var names a transferEnv entry copies (envName and envNames), sorted, once each. */
function transferNames(t: TransferEnv): string[] {
  return [...new Set([...(t.envName ? [t.envName] : []), ...(t.envNames ?? [])])].sort();
}

/** With shareVolumePolicy enabled: the app containers' mounts and the env vars their subPathExpr needs. */
export function sharedMountsAndEnvs(
  sidecar: SidecarContainer,
  pod: MutablePod,
): { mounts: VolumeMount[]; envs: EnvVar[] } {
  if (sidecar.shareVolumePolicy?.type !== 'enabled') return { mounts: [], envs: [] };
  const mounts: VolumeMount[] = [];
  const envs: EnvVar[] = [];
  for (const app of pod.spec?.containers ?? []) {
    if (isInjectedContainer(app)) continue;
    for (const mount of (app.volumeMounts ?? []) as VolumeMount[]) {
      mounts.push(mount);
      for (const [, name] of (mount.subPathExpr ?? '').matchAll(SUBPATH_EXPR_ENV)) {
        const env = (app.env ?? []).find((e) => e.name === name);
        if (env) envs.push(env);
      }
    }
  }
  return { mounts, envs };
}

/** `original` plus the vars of `additional` whose names are new (util.MergeEnvVar). */
export function mergeEnv(original: readonly EnvVar[], additional: readonly EnvVar[]): EnvVar[] {
  const names = new Set(original.map((e) => e.name));
  const out = [...original];
  for (const e of additional) {
    if (names.has(e.name)) continue;
    out.push(e);
    names.add(e.name);
  }
  return out;
}

/** The container's mounts plus those of `additional` at mount paths not used yet (util.MergeVolumeMounts). */
export function mergeMounts(container: Container, additional: readonly VolumeMount[]): VolumeMount[] {
  const own = (container.volumeMounts ?? []) as VolumeMount[];
  const paths = new Set(own.map((m) => m.mountPath));
  for (const d of (container.volumeDevices ?? []) as { devicePath?: string }[])
    if (d.devicePath) paths.add(d.devicePath);
  const out = [...own];
  for (const m of additional) {
    if (paths.has(m.mountPath)) continue;
    out.push(m);
    paths.add(m.mountPath);
  }
  return out;
}

/**
 * The sidecar as it goes into this pod: shared mounts merged, IS_INJECTED=true appended, transferred
 * and subPathExpr env vars added where the sidecar does not define them, shared volume devices
 * merged after the mounts. `sidecar` is not modified.
 */
export function sidecarForPod(sidecar: SidecarContainer, pod: MutablePod): SidecarContainer {
  const shared = sharedMountsAndEnvs(sidecar, pod);
  const extraEnv = mergeEnv(transferEnvs(sidecar, pod), shared.envs);
  const c = structuredClone(sidecar);
  c.volumeMounts = mergeMounts(c, shared.mounts);
  c.env = mergeEnv([...(c.env ?? []), { name: ENV_SIDECAR_INJECTED, value: 'true' }], extraEnv);
  const devices = mergeDevices(c, sharedDevices(sidecar, pod));
  if (devices.length > 0) c.volumeDevices = devices;
  return c;
}

type VolumeDevice = { name: string; devicePath: string };

/**
 * With shareVolumeDevicePolicy enabled (v1.9): the volumeDevices of the pod's app containers (not
 * its init containers, not injected sidecars), as sidecarcontrol.GetInjectedVolumeDevices.
 */
export function sharedDevices(sidecar: SidecarContainer, pod: MutablePod): VolumeDevice[] {
  if (sidecar.shareVolumeDevicePolicy?.type !== 'enabled') return [];
  return (pod.spec?.containers ?? [])
    .filter((app) => !isInjectedContainer(app))
    .flatMap((app) => (app.volumeDevices ?? []) as VolumeDevice[]);
}

/**
 * The container's devices plus those of `additional` whose devicePath is neither one of its
 * devicePaths nor one of its mountPaths (util.MergeVolumeDevices; mounts are merged first).
 */
export function mergeDevices(container: Container, additional: readonly VolumeDevice[]): VolumeDevice[] {
  const own = (container.volumeDevices ?? []) as VolumeDevice[];
  const paths = new Set([
    ...own.map((d) => d.devicePath),
    ...((container.volumeMounts ?? []) as VolumeMount[]).map((m) => m.mountPath),
  ]);
  const out = [...own];
  for (const d of additional) {
    if (paths.has(d.devicePath)) continue;
    out.push(d);
    paths.add(d.devicePath);
  }
  return out;
}

/** The sidecar as a plain pod container: the OpenKruise-only fields removed. */
export function toPodContainer(sidecar: SidecarContainer): Container {
  const { podInjectPolicy: _p, upgradeStrategy: _u, shareVolumePolicy: _s, transferEnv: _t, ...container } = sidecar;
  delete (container as Record<string, unknown>).shareVolumeDevicePolicy;
  delete (container as Record<string, unknown>).resourcesPolicy;
  return container;
}
