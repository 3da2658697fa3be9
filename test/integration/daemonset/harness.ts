/**
 * The Advanced DaemonSet controller run in-process against the run's last cluster, watching one
 * test namespace and only the kwok nodes this file adds (labelled NODE_LABEL=<run id> and tainted
 * so no other suite's pods land there), plus helpers to write sets and read sets and pods.
 */
import type { V1Node } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import { Registry } from 'prom-client';
import { fakeNode } from '@flotilla/test';
import type { DaemonSetV1beta1 } from '@flotilla/api';
import { EventRecorder, kubeEventSink } from '../../../agent/src/runtime/events.js';
import { kubeListWatcher } from '../../../agent/src/runtime/kube-list-watch.js';
import { Manager } from '../../../agent/src/runtime/manager.js';
import { RuntimeMetrics } from '../../../agent/src/runtime/metrics.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { createKubeRest, PatchType, type KubeRest } from '../../../agent/src/runtime/rest.js';
import { registerDaemonSetController } from '../../../agent/src/controllers/daemonset/index.js';
import type { Pod } from '../../../agent/src/kube/types.js';
import { clusters } from '../helpers/context.js';
import { eventually, kube, testNamespace, type Kube } from '../helpers/kube.js';
import { installCrds } from '../helpers/crds.js';

export type { Pod };

/** Every node of this file carries this label (value: the run id) and ONLY_TAINT. */
export const NODE_LABEL = 'flotilla.test/ads';
export const ONLY_TAINT = { key: 'flotilla.test/ads-only', value: 'yes', effect: 'NoSchedule' };

export interface Env {
  k: Kube;
  rest: KubeRest;
  logger: Logger;
  runId: string;
}

export function env(): Env {
  const all = clusters();
  const k = kube(all[all.length - 1]!);
  return {
    k,
    rest: createKubeRest(k.kc),
    logger: pino({ level: process.env.FLOTILLA_TEST_LOG ?? 'silent' }, pino.destination(2)),
    runId: Math.random().toString(36).slice(2, 7),
  };
}

let crdsInstalled: Promise<unknown> | undefined;

/** A fresh namespace, with the Kruise CRDs installed (once per file). */
export async function namespace(e: Env, prefix: string): Promise<string> {
  crdsInstalled ??= installCrds(e.k);
  await crdsInstalled;
  return testNamespace(e.k, prefix);
}

/** Adds kwok nodes with this run's label, ONLY_TAINT and the given extra labels and taints. */
export async function addNode(
  e: Env,
  name: string,
  labels: Record<string, string> = {},
  taints: { key: string; value: string; effect: string }[] = [],
): Promise<void> {
  const node: V1Node = fakeNode(name, 0);
  node.metadata!.labels = { ...node.metadata!.labels, [NODE_LABEL]: e.runId, ...labels };
  node.spec = { taints: [ONLY_TAINT, ...taints] };
  await e.k.core.createNode({ body: node });
}

export interface RunningController {
  stop(): Promise<void>;
}

/** Starts a manager running only the DaemonSet controller, scoped to `ns` and this run's nodes. */
export async function startController(e: Env, ns: string): Promise<RunningController> {
  const manager = new Manager({
    logger: e.logger,
    metrics: new RuntimeMetrics(new Registry()),
    listWatcherFor: (resource, options) => kubeListWatcher(e.k.kc, e.rest, resource, options),
    shutdownTimeoutMs: 5000,
  });
  const events = new EventRecorder({
    sink: kubeEventSink(e.rest),
    component: 'flotilla-agent/daemonset',
    instance: 'test',
    logger: e.logger,
  });
  registerDaemonSetController(manager, {
    rest: e.rest,
    events,
    namespace: ns,
    nodeSelector: `${NODE_LABEL}=${e.runId}`,
  });
  const done = manager.start();
  await eventually('controller caches synced', () => Promise.resolve(manager.hasSynced()), 30_000, 50);
  return {
    stop: async () => {
      await manager.stop('test over');
      await done.catch(() => undefined);
    },
  };
}

/** A v1beta1 DaemonSet `name` with one `main` container, tolerating ONLY_TAINT, on this run's nodes. */
export function daemonSet(e: Env, name: string, spec: Partial<DaemonSetV1beta1['spec']> = {}): DaemonSetV1beta1 {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'DaemonSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          nodeSelector: { [NODE_LABEL]: e.runId },
          tolerations: [{ key: ONLY_TAINT.key, operator: 'Exists', effect: 'NoSchedule' }],
          containers: [{ name: 'main', image: 'registry.local/agent:v1' }],
        },
      },
      ...spec,
    },
  };
}

const sets = Resources.daemonSets;

export function createSet(e: Env, ns: string, ds: object, version = 'v1beta1'): Promise<DaemonSetV1beta1> {
  return e.rest.request<DaemonSetV1beta1>({ method: 'POST', path: resourcePath({ ...sets, version }, ns), body: ds });
}

export function getSet<T = DaemonSetV1beta1>(e: Env, ns: string, name: string, version = 'v1beta1'): Promise<T> {
  return e.rest.request<T>({ method: 'GET', path: resourcePath({ ...sets, version }, ns, name) });
}

export function patchSet(e: Env, ns: string, name: string, patch: object): Promise<DaemonSetV1beta1> {
  return e.rest.request<DaemonSetV1beta1>({
    method: 'PATCH',
    path: resourcePath(sets, ns, name),
    contentType: PatchType.merge,
    body: patch,
  });
}

/** Waits until the set's status satisfies `done`. */
export function waitForSet(
  e: Env,
  ns: string,
  name: string,
  what: string,
  done: (ds: DaemonSetV1beta1) => boolean,
  timeoutMs = 30_000,
): Promise<DaemonSetV1beta1> {
  return eventually(
    `${name}: ${what}`,
    async () => {
      const ds = await getSet(e, ns, name);
      if (done(ds)) return ds;
      const pods = (
        await e.rest.request<{ items: Pod[] }>({ method: 'GET', path: resourcePath(Resources.pods, ns) })
      ).items
        .filter((p) => p.metadata.labels?.app === name)
        .map(
          (p) =>
            `${p.metadata.name}@${p.spec.nodeName ?? '-'}:${p.spec.containers[0]?.image}${p.metadata.deletionTimestamp ? ':deleting' : ''}:${p.status?.phase}`,
        );
      throw new Error(
        `generation ${ds.metadata?.generation}, status ${JSON.stringify(ds.status)}, pods ${pods.join(' ')}`,
      );
    },
    timeoutMs,
    100,
  );
}

/** Pods of set `name` (by its app label) that are not being deleted. */
export async function podsOf(e: Env, ns: string, name: string): Promise<Pod[]> {
  const list = await e.rest.request<{ items: Pod[] }>({
    method: 'GET',
    path: `${resourcePath(Resources.pods, ns)}?labelSelector=app%3D${name}`,
  });
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

/** All updated, ready and available on `desired` nodes, at the set's generation. */
export const rolledOut =
  (desired: number) =>
  (ds: DaemonSetV1beta1): boolean =>
    ds.status?.observedGeneration === ds.metadata?.generation &&
    ds.status?.desiredNumberScheduled === desired &&
    ds.status?.updatedNumberScheduled === desired &&
    ds.status?.numberAvailable === desired &&
    ds.status?.numberReady === desired;
