/**
 * The CloneSet controller run in-process against cluster #0, watching only one test namespace
 * (other suites share the cluster), plus small helpers to read CloneSets, pods, PVCs, revisions
 * and events as plain JSON.
 */
import { pino, type Logger } from 'pino';
import { Registry } from 'prom-client';
// The runtime is imported from the same sources as the controller below (not through the
// package, which may resolve to its build output): one module graph, one KubeApiError class.
import { EventRecorder, kubeEventSink } from '../../../agent/src/runtime/events.js';
import { kubeListWatcher } from '../../../agent/src/runtime/kube-list-watch.js';
import { Manager } from '../../../agent/src/runtime/manager.js';
import { RuntimeMetrics } from '../../../agent/src/runtime/metrics.js';
import { resourcePath, Resources, type ResourceRef } from '../../../agent/src/runtime/resource.js';
import { createKubeRest, PatchType, type KubeRest } from '../../../agent/src/runtime/rest.js';
import type { CloneSet } from '@flotilla/api';
import {
  registerCloneSetController,
  type CloneSetControllerDeps,
} from '../../../agent/src/controllers/cloneset/index.js';
import type { Pod, PersistentVolumeClaim, ControllerRevision } from '../../../agent/src/kube/types.js';
import { clusters, type ClusterInfo } from '../helpers/context.js';
import { eventually, kube, testNamespace, type Kube } from '../helpers/kube.js';
import { installCrds } from '../helpers/crds.js';

export type { Pod, PersistentVolumeClaim, ControllerRevision };

export interface Env {
  k: Kube;
  rest: KubeRest;
  logger: Logger;
}

/**
 * The run's last cluster: `agent manager` processes of other suites (which run every controller,
 * in all namespaces) use cluster #0, and must not reconcile this suite's CloneSets alongside the
 * controller under test.
 */
export function testCluster(): ClusterInfo {
  const all = clusters();
  return all[all.length - 1]!;
}

/** Clients for the test cluster; controller logs go to stderr only when FLOTILLA_TEST_LOG names a level. */
export function env(): Env {
  const k = kube(testCluster());
  return {
    k,
    rest: createKubeRest(k.kc),
    logger: pino({ level: process.env.FLOTILLA_TEST_LOG ?? 'silent' }, pino.destination(2)),
  };
}

let crdsInstalled: Promise<unknown> | undefined;

/** A fresh namespace, with the Kruise CRDs installed (once per file). */
export async function namespace(e: Env, prefix: string): Promise<string> {
  crdsInstalled ??= installCrds(e.k);
  await crdsInstalled;
  return testNamespace(e.k, prefix);
}

export interface RunningController {
  manager: Manager;
  stop(): Promise<void>;
}

/** Starts a manager running only the CloneSet controller, scoped to `ns`; resolves once synced. */
export async function startController(
  e: Env,
  ns: string,
  extra: Partial<CloneSetControllerDeps> = {},
): Promise<RunningController> {
  const manager = new Manager({
    logger: e.logger,
    metrics: new RuntimeMetrics(new Registry()),
    listWatcherFor: (resource, options) => kubeListWatcher(e.k.kc, e.rest, resource, options),
    shutdownTimeoutMs: 5000,
  });
  const events = new EventRecorder({
    sink: kubeEventSink(e.rest),
    component: 'flotilla-agent/cloneset',
    instance: 'test',
    logger: e.logger,
  });
  registerCloneSetController(manager, { rest: e.rest, events, namespace: ns, ...extra });
  const done = manager.start();
  await eventually('controller caches synced', () => Promise.resolve(manager.hasSynced()), 30_000, 50);
  return {
    manager,
    stop: async () => {
      await manager.stop('test over');
      await done.catch(() => undefined);
    },
  };
}

export type CloneSetSpecInput = Partial<CloneSet['spec']> & { image?: string };

/** A CloneSet `name` selecting app=<name>, one container `main` at `image` (default registry.local/app:v1). */
export function cloneSet(name: string, spec: CloneSetSpecInput = {}): CloneSet {
  const { image = 'registry.local/app:v1', ...rest } = spec;
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } },
      ...rest,
    },
  };
}

const sets = Resources.cloneSets;

export function createCloneSet(e: Env, ns: string, cs: CloneSet): Promise<CloneSet> {
  return e.rest.request<CloneSet>({ method: 'POST', path: resourcePath(sets, ns), body: cs });
}

export function getCloneSet(e: Env, ns: string, name: string): Promise<CloneSet> {
  return e.rest.request<CloneSet>({ method: 'GET', path: resourcePath(sets, ns, name) });
}

/** A JSON merge patch of the CloneSet. */
export function patchCloneSet(e: Env, ns: string, name: string, patch: unknown): Promise<CloneSet> {
  return e.rest.request<CloneSet>({
    method: 'PATCH',
    path: resourcePath(sets, ns, name),
    contentType: PatchType.merge,
    body: patch,
  });
}

/** A JSON merge patch of a pod. */
export function patchPod(e: Env, ns: string, name: string, patch: unknown): Promise<Pod> {
  return e.rest.request<Pod>({
    method: 'PATCH',
    path: resourcePath(Resources.pods, ns, name),
    contentType: PatchType.merge,
    body: patch,
  });
}

async function list<T>(e: Env, ref: ResourceRef, ns: string, labelSelector?: string): Promise<T[]> {
  const body = await e.rest.request<{ items: T[] }>({
    method: 'GET',
    path: resourcePath(ref, ns),
    query: { labelSelector },
  });
  return body.items;
}

/** Pods of the CloneSet `name` (label app=<name>), including terminating ones. */
export function pods(e: Env, ns: string, name: string): Promise<Pod[]> {
  return list<Pod>(e, Resources.pods, ns, `app=${name}`);
}

/** Pods not being deleted. */
export async function livePods(e: Env, ns: string, name: string): Promise<Pod[]> {
  return (await pods(e, ns, name)).filter((p) => !p.metadata.deletionTimestamp);
}

export function claims(e: Env, ns: string): Promise<PersistentVolumeClaim[]> {
  return list<PersistentVolumeClaim>(e, Resources.persistentVolumeClaims, ns);
}

export function revisions(e: Env, ns: string): Promise<ControllerRevision[]> {
  return list<ControllerRevision>(e, Resources.controllerRevisions, ns);
}

export interface EventLike {
  reason: string;
  message: string;
  type: string;
  involvedObject: { name?: string; kind?: string };
  source?: { component?: string; host?: string };
}

/** Events about the CloneSet `name`. */
export async function events(e: Env, ns: string, name: string): Promise<EventLike[]> {
  const body = await e.rest.request<{ items: EventLike[] }>({
    method: 'GET',
    path: resourcePath(Resources.events, ns),
  });
  return body.items.filter((ev) => ev.involvedObject.name === name && ev.involvedObject.kind === 'CloneSet');
}

export function isReady(p: Pod): boolean {
  return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

export function condition(p: Pod, type: string): string | undefined {
  return p.status?.conditions?.find((c) => c.type === type)?.status;
}

/** Waits until the CloneSet status satisfies `check`; resolves the CloneSet. */
export function statusReaches(
  e: Env,
  ns: string,
  name: string,
  what: string,
  check: (status: NonNullable<CloneSet['status']>, cs: CloneSet) => boolean,
  timeoutMs = 60_000,
): Promise<CloneSet> {
  return eventually(
    `${name}: ${what}`,
    async () => {
      const cs = await getCloneSet(e, ns, name);
      return cs.status !== undefined && check(cs.status, cs) && cs;
    },
    timeoutMs,
  );
}

/** All `replicas` pods ready and updated, status observed for the latest generation. */
export function settled(e: Env, ns: string, name: string, replicas: number, timeoutMs?: number): Promise<CloneSet> {
  return statusReaches(
    e,
    ns,
    name,
    `${replicas} pods updated and ready`,
    (s, cs) =>
      s.observedGeneration === cs.metadata?.generation &&
      s.replicas === replicas &&
      s.readyReplicas === replicas &&
      s.updatedReadyReplicas === replicas &&
      s.currentRevision === s.updateRevision,
    timeoutMs,
  );
}

/** The in-place update record a pod carries (apps.kruise.io/inplace-update-state). */
export interface InPlaceState {
  revision: string;
  updateTimestamp: string;
  updateImages?: boolean;
  lastContainerStatuses: Record<string, { imageID?: string }> | null;
  nextContainerImages?: Record<string, string>;
  containerBatchesRecord?: { timestamp: string; containers: string[] }[];
}

export function inPlaceState(p: Pod): InPlaceState {
  return JSON.parse(p.metadata.annotations?.['apps.kruise.io/inplace-update-state'] ?? 'null') as InPlaceState;
}
