import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  AdmissionregistrationV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { KruiseResources, type KruiseKindName } from '@flotilla/api';
import type { ClusterInfo } from './context.js';
import { kubeConfigOf } from './context.js';

export interface Kube {
  kc: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  custom: CustomObjectsApi;
  admission: AdmissionregistrationV1Api;
}

export function kube(c: ClusterInfo): Kube {
  const kc = kubeConfigOf(c);
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    admission: kc.makeApiClient(AdmissionregistrationV1Api),
  };
}

/** The group, version and plural CustomObjectsApi calls take for a Kruise kind (api's resource table). */
export function customResource(kind: KruiseKindName): { group: string; version: string; plural: string } {
  const { group, version, plural } = KruiseResources[kind];
  return { group, version, plural };
}

export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
export const strategicPatch = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

/** Creates a uniquely named namespace for one test; tests never share namespaces. */
export async function testNamespace(k: Kube, prefix: string, labels: Record<string, string> = {}): Promise<string> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  await k.core.createNamespace({ body: { metadata: { name, labels: { 'flotilla.test/ns': name, ...labels } } } });
  return name;
}

/** Polls until `fn` returns a value other than undefined/false; fails with `what` and the last value. */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${detail})`);
    }
    await sleep(intervalMs);
  }
}

export function isPodReady(p: V1Pod): boolean {
  return Boolean(p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
}

export function podCondition(p: V1Pod, type: string): string | undefined {
  return p.status?.conditions?.find((c) => c.type === type)?.status;
}

/** A minimal pod spec for kwok nodes. */
export function simplePod(name: string, image: string, extra: Partial<V1Pod['spec']> = {}): V1Pod {
  return {
    metadata: { name, labels: { app: name } },
    spec: { containers: [{ name: 'main', image }], ...extra },
  };
}
