/**
 * Plays the kubelet's part for one rendered container, on this machine: resolves its env
 * (literals, secretKeyRefs, configMapKeyRefs, fieldRefs) from in-memory Secrets and ConfigMaps,
 * and materialises its volume mounts (Secret and ConfigMap volumes with their items and modes,
 * emptyDirs) as folders under a local directory. A path in the env that points into a mount is
 * moved to the mount's local folder (the one liberty taken: a test may not write /etc); nothing
 * else is added, so a process started with the result sees what the pod would.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { EnvVar, HubContainer, HubPodSpec, KeyToPath, Volume } from './hub-chart.js';

/** Secrets and ConfigMaps of the namespace: name → key → content. */
export interface NamespaceObjects {
  secrets: Record<string, Record<string, string>>;
  configMaps: Record<string, Record<string, string>>;
}

export interface ResolvedContainer {
  env: Record<string, string>;
  args: string[];
  /** mountPath → the local folder standing for it. */
  mounts: Record<string, string>;
  /** Names of env variables whose value came from a Secret (never a literal). */
  fromSecrets: string[];
}

export class PodRuntimeError extends Error {
  readonly code = 'POD_ERR_CONFIG';
  constructor(message: string) {
    super(message);
    this.name = 'PodRuntimeError';
  }
}

function lookup(
  store: Record<string, Record<string, string>>,
  kind: string,
  ref: { name: string; key: string; optional?: boolean },
): string | undefined {
  const value = store[ref.name]?.[ref.key];
  if (value === undefined && !ref.optional) {
    // What the kubelet reports as CreateContainerConfigError.
    throw new PodRuntimeError(`${kind} ${ref.name} has no key ${ref.key}`);
  }
  return value;
}

const FIELDS: Record<string, string> = {
  'metadata.name': 'flotilla-hub-0',
  'metadata.namespace': 'flotilla',
  'status.podIP': '127.0.0.1',
};

function envValue(e: EnvVar, objects: NamespaceObjects): string | undefined {
  if (e.value !== undefined) return e.value;
  const from = e.valueFrom ?? {};
  if (from.secretKeyRef) return lookup(objects.secrets, 'Secret', from.secretKeyRef);
  if (from.configMapKeyRef) return lookup(objects.configMaps, 'ConfigMap', from.configMapKeyRef);
  if (from.fieldRef) {
    const v = FIELDS[from.fieldRef.fieldPath];
    if (v === undefined)
      throw new PodRuntimeError(`env ${e.name}: fieldRef ${from.fieldRef.fieldPath} not played here`);
    return v;
  }
  return '';
}

/** Writes the keys of a Secret or ConfigMap volume (its items, or every key) with their modes. */
function writeProjected(dir: string, data: Record<string, string>, items: KeyToPath[] | undefined, mode: number): void {
  const entries: KeyToPath[] = items ?? Object.keys(data).map((key) => ({ key, path: key }));
  for (const item of entries) {
    const content = data[item.key];
    if (content === undefined) throw new PodRuntimeError(`volume item ${item.key} is missing from its source`);
    const file = path.join(dir, item.path);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
    // The owner (this test's user, standing for the pod's user via fsGroup) must be able to read it.
    chmodSync(file, (item.mode ?? mode) | 0o400);
  }
}

function materialise(volume: Volume, dir: string, objects: NamespaceObjects): void {
  mkdirSync(dir, { recursive: true });
  if (volume.emptyDir) return;
  if (volume.secret) {
    const data = objects.secrets[volume.secret.secretName];
    if (data === undefined) throw new PodRuntimeError(`Secret ${volume.secret.secretName} not found`);
    writeProjected(dir, data, volume.secret.items, volume.secret.defaultMode ?? 0o644);
    return;
  }
  if (volume.configMap) {
    const data = objects.configMaps[volume.configMap.name];
    if (data === undefined) throw new PodRuntimeError(`ConfigMap ${volume.configMap.name} not found`);
    writeProjected(dir, data, volume.configMap.items, volume.configMap.defaultMode ?? 0o644);
    return;
  }
  throw new PodRuntimeError(`volume ${volume.name}: only emptyDir, secret and configMap are played here`);
}

/** A value that is a path inside a mount, moved to the mount's local folder. */
function relocate(value: string, mounts: Record<string, string>): string {
  for (const [mountPath, local] of Object.entries(mounts)) {
    if (value === mountPath || value.startsWith(`${mountPath}/`)) return local + value.slice(mountPath.length);
  }
  return value;
}

/** Resolves `container` of `pod` into an environment, arguments and local mount folders under `dir`. */
export function resolveContainer(
  pod: HubPodSpec,
  container: HubContainer,
  objects: NamespaceObjects,
  dir: string,
): ResolvedContainer {
  if (container.envFrom !== undefined) throw new PodRuntimeError('envFrom is not played here');
  const volumes = new Map((pod.volumes ?? []).map((v) => [v.name, v]));
  const mounts: Record<string, string> = {};
  for (const m of container.volumeMounts ?? []) {
    const volume = volumes.get(m.name);
    if (volume === undefined) throw new PodRuntimeError(`volumeMount ${m.name} has no volume`);
    if (m.subPath !== undefined) throw new PodRuntimeError(`volumeMount ${m.name}: subPath is not played here`);
    const local = path.join(dir, 'mounts', m.name);
    materialise(volume, local, objects);
    mounts[m.mountPath] = local;
  }
  const env: Record<string, string> = {};
  const fromSecrets: string[] = [];
  for (const e of container.env ?? []) {
    const value = envValue(e, objects);
    if (value === undefined) continue;
    env[e.name] = relocate(value, mounts);
    if (e.valueFrom?.secretKeyRef) fromSecrets.push(e.name);
  }
  return { env, args: container.args ?? [], mounts, fromSecrets };
}
