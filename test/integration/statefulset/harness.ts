/**
 * The Advanced StatefulSet controller run in-process against the CloneSet suites' cluster (the
 * run's last one), watching one test namespace, plus helpers to write sets and read them as plain
 * JSON. The generic pod, claim and revision readers are the CloneSet harness's.
 */
import { Registry } from 'prom-client';
import { afterEach } from 'vitest';
import {
  defaultStatefulSet,
  KRUISE_V1BETA1_API_VERSION,
  LABEL_CONTROLLER_REVISION_HASH,
  type StatefulSet,
} from '@flotilla/api';
import { EventRecorder, kubeEventSink } from '../../../agent/src/runtime/events.js';
import { kubeListWatcher } from '../../../agent/src/runtime/kube-list-watch.js';
import { Manager } from '../../../agent/src/runtime/manager.js';
import { RuntimeMetrics } from '../../../agent/src/runtime/metrics.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { PatchType } from '../../../agent/src/runtime/rest.js';
import { registerStatefulSetController } from '../../../agent/src/controllers/statefulset/index.js';
import { eventually } from '../helpers/kube.js';
import { namespace, type Env, type Pod, type RunningController } from '../cloneset/harness.js';

export {
  claims,
  condition,
  env,
  inPlaceState,
  isReady,
  livePods,
  namespace,
  pods,
  revisions,
  type Env,
  type Pod,
  type RunningController,
} from '../cloneset/harness.js';

/** Starts a manager running only the StatefulSet controller, scoped to `ns`; resolves once synced. */
export async function startController(e: Env, ns: string): Promise<RunningController> {
  const manager = new Manager({
    logger: e.logger,
    metrics: new RuntimeMetrics(new Registry()),
    listWatcherFor: (resource, options) => kubeListWatcher(e.k.kc, e.rest, resource, options),
    shutdownTimeoutMs: 5000,
  });
  const events = new EventRecorder({
    sink: kubeEventSink(e.rest),
    component: 'flotilla-agent/statefulset',
    instance: 'test',
    logger: e.logger,
  });
  registerStatefulSetController(manager, { rest: e.rest, events, namespace: ns });
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

/**
 * Per-test controllers: the function returned makes a namespace and starts the controller in it;
 * each is stopped after its test.
 */
export function controllerPerTest(e: Env): (prefix: string) => Promise<string> {
  const running: RunningController[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop()));
  });
  return async (prefix) => {
    const ns = await namespace(e, prefix);
    running.push(await startController(e, ns));
    return ns;
  };
}

/** The pod's controller-revision-hash label. */
export const revisionOf = (p: Pod): string => p.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '';

/**
 * A v1beta1 set `name` selecting app=<name>, one container `main` at `image` with the
 * InPlaceUpdateReady gate, defaulted as OpenKruise's webhook stores it.
 */
export function statefulSet(
  name: string,
  spec: Partial<StatefulSet['spec']> = {},
  image = 'registry.local/app:v1',
): StatefulSet {
  return defaultStatefulSet({
    apiVersion: KRUISE_V1BETA1_API_VERSION,
    kind: 'StatefulSet',
    metadata: { name },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [{ name: 'main', image }],
          readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
        },
      },
      ...spec,
    },
  });
}

const sets = Resources.statefulSets;

export function createSet(e: Env, ns: string, set: StatefulSet): Promise<StatefulSet> {
  return e.rest.request<StatefulSet>({ method: 'POST', path: resourcePath(sets, ns), body: set });
}

export function getSet(e: Env, ns: string, name: string): Promise<StatefulSet> {
  return e.rest.request<StatefulSet>({ method: 'GET', path: resourcePath(sets, ns, name) });
}

export function patchSet(e: Env, ns: string, name: string, patch: unknown): Promise<StatefulSet> {
  return e.rest.request<StatefulSet>({
    method: 'PATCH',
    path: resourcePath(sets, ns, name),
    contentType: PatchType.merge,
    body: patch,
  });
}

/** Waits until the set's status satisfies `check`; resolves the set. */
export function statusReaches(
  e: Env,
  ns: string,
  name: string,
  what: string,
  check: (status: NonNullable<StatefulSet['status']>, set: StatefulSet) => boolean,
  timeoutMs = 60_000,
): Promise<StatefulSet> {
  return eventually(
    `${name}: ${what}`,
    async () => {
      const set = await getSet(e, ns, name);
      return set.status && set.status.observedGeneration === set.metadata?.generation && check(set.status, set)
        ? set
        : false;
    },
    timeoutMs,
    100,
  );
}
