/**
 * The BroadcastJob controller run in-process against the run's last cluster (the cluster the
 * CloneSet suites use; agent processes of other suites run on cluster #0), watching only one
 * test namespace, plus helpers to write jobs and read jobs and pods as plain JSON. Pods end by
 * the kwok stage `flotilla-pod-exit` when their template carries the label EXIT_CODE_LABEL.
 */
import type { V1Node } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import { Registry } from 'prom-client';
import { fakeNode } from '@flotilla/test';
import type { BroadcastJob } from '@flotilla/api';
// The runtime and the controller come from the same sources: one module graph.
import { EventRecorder, kubeEventSink } from '../../../agent/src/runtime/events.js';
import { kubeListWatcher } from '../../../agent/src/runtime/kube-list-watch.js';
import { Manager } from '../../../agent/src/runtime/manager.js';
import { RuntimeMetrics } from '../../../agent/src/runtime/metrics.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { createKubeRest, PatchType, type KubeRest } from '../../../agent/src/runtime/rest.js';
import { isKubeStatus } from '../../../agent/src/errors.js';
import {
  registerBroadcastJobController,
  type BroadcastJobControllerOptions,
} from '../../../agent/src/controllers/broadcastjob/index.js';
import type { Pod } from '../../../agent/src/kube/types.js';
import { clusters } from '../helpers/context.js';
import { eventually, kube, testNamespace, type Kube } from '../helpers/kube.js';
import { installCrds } from '../helpers/crds.js';

export type { Pod };

/** The opt-in label of the kwok stage that ends a Running pod with this exit code. */
export const EXIT_CODE_LABEL = 'flotilla.test/exit-code';

export interface Env {
  k: Kube;
  rest: KubeRest;
  logger: Logger;
}

export function env(): Env {
  const all = clusters();
  const k = kube(all[all.length - 1]!);
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

/** The cluster's own kwok nodes (untainted), by name. */
export async function clusterNodes(e: Env): Promise<string[]> {
  const nodes = await e.k.core.listNode();
  return nodes.items
    .filter((n) => (n.spec?.taints ?? []).length === 0 && !n.spec?.unschedulable)
    .map((n) => n.metadata!.name!)
    .sort();
}

/**
 * A kwok node with a NoSchedule taint nothing else tolerates (so other suites' pods never land
 * on it), in zone-a like one of the cluster's own nodes (so no topology domain is added).
 */
export async function addTaintedNode(e: Env, name: string): Promise<() => Promise<void>> {
  const node: V1Node = fakeNode(name, 0);
  node.spec = { taints: [{ key: 'flotilla.test/bcj-untolerated', value: 'yes', effect: 'NoSchedule' }] };
  await e.k.core.createNode({ body: node });
  return async () => {
    await e.k.core.deleteNode({ name }).catch(() => undefined);
  };
}

export interface RunningController {
  stop(): Promise<void>;
}

/** Starts a manager running only the BroadcastJob controller, scoped to `ns`; resolves once synced. */
export async function startController(
  e: Env,
  ns: string,
  options: Partial<BroadcastJobControllerOptions> = {},
): Promise<RunningController> {
  const manager = new Manager({
    logger: e.logger,
    metrics: new RuntimeMetrics(new Registry()),
    listWatcherFor: (resource, options) => kubeListWatcher(e.k.kc, e.rest, resource, options),
    shutdownTimeoutMs: 5000,
  });
  const events = new EventRecorder({
    sink: kubeEventSink(e.rest),
    component: 'flotilla-agent/broadcastjob',
    instance: 'test',
    logger: e.logger,
  });
  registerBroadcastJobController(manager, { rest: e.rest, events, namespace: ns, options });
  const done = manager.start();
  await eventually('controller caches synced', () => Promise.resolve(manager.hasSynced()), 30_000, 50);
  return {
    stop: async () => {
      await manager.stop('test over');
      await done.catch(() => undefined);
    },
  };
}

export interface JobInput {
  /** Exit code the kwok stage gives the pods; undefined: they keep running. */
  exitCode?: number;
  spec?: Partial<BroadcastJob['spec']>;
}

/** A BroadcastJob `name` running one `main` container with restartPolicy Never. */
export function broadcastJob(name: string, input: JobInput = {}): BroadcastJob {
  const labels: Record<string, string> =
    input.exitCode === undefined ? {} : { [EXIT_CODE_LABEL]: String(input.exitCode) };
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'BroadcastJob',
    metadata: { name },
    spec: {
      template: {
        metadata: { labels },
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'registry.local/task:v1' }] },
      },
      ...input.spec,
    },
  };
}

const jobs = Resources.broadcastJobs;

export function createJob(e: Env, ns: string, job: BroadcastJob): Promise<BroadcastJob> {
  return e.rest.request<BroadcastJob>({ method: 'POST', path: resourcePath(jobs, ns), body: job });
}

export async function getJob(e: Env, ns: string, name: string): Promise<BroadcastJob | undefined> {
  try {
    return await e.rest.request<BroadcastJob>({ method: 'GET', path: resourcePath(jobs, ns, name) });
  } catch (err) {
    if (isKubeStatus(err, 404)) return undefined;
    throw err;
  }
}

export function patchJob(e: Env, ns: string, name: string, patch: object): Promise<BroadcastJob> {
  return e.rest.request<BroadcastJob>({
    method: 'PATCH',
    path: resourcePath(jobs, ns, name),
    contentType: PatchType.merge,
    body: patch,
  });
}

/** Waits until the job's status satisfies `done`, and returns the job. */
export function waitForJob(
  e: Env,
  ns: string,
  name: string,
  what: string,
  done: (job: BroadcastJob) => boolean,
  timeoutMs = 30_000,
): Promise<BroadcastJob> {
  return eventually(
    `${name}: ${what}`,
    async () => {
      const job = await getJob(e, ns, name);
      return job && done(job) ? job : false;
    },
    timeoutMs,
    100,
  );
}

export async function listPods(e: Env, ns: string): Promise<Pod[]> {
  const list = await e.rest.request<{ items: Pod[] }>({ method: 'GET', path: resourcePath(Resources.pods, ns) });
  return list.items;
}
