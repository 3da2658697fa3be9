/**
 * Advanced DaemonSet bench: how long the agent's DaemonSet controller takes to put one pod on each
 * of N kwok nodes, and then to update all of them in place (InPlaceIfPossible, maxUnavailable
 * 100%), on a harness cluster of its own. Numbers only, no timed assertions.
 *
 *   npm run bench:daemonset                    # 100 nodes: results/daemonset.json
 *   npm run bench:daemonset -- --nodes 10      # smoke: results/daemonset-smoke.json
 *
 * The controller runs in the bench process (as in the integration suite), so `cpuMsPerPod` is the
 * bench's own CPU (the controller and a status poll every 100 ms) per pod. Each phase is timed from
 * its write until the set's status shows every node updated, ready and available at the new
 * generation; `recreated` counts pods of the in-place phase whose UID changed (0 means every pod
 * was updated in place).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { parse } from 'yaml';
import type { DaemonSetV1beta1 } from '@flotilla/api';
import { registerDaemonSetController } from '../../../agent/src/controllers/daemonset/index.js';
import type { Pod } from '../../../agent/src/kube/types.js';
import { EventRecorder, kubeEventSink } from '../../../agent/src/runtime/events.js';
import { kubeListWatcher } from '../../../agent/src/runtime/kube-list-watch.js';
import { Manager } from '../../../agent/src/runtime/manager.js';
import { RuntimeMetrics } from '../../../agent/src/runtime/metrics.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { createKubeRest, PatchType, type KubeRest } from '../../../agent/src/runtime/rest.js';
import { startCluster } from '../../env/src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const nodes = Number(flag('nodes') ?? 100);
const out = path.join(here, '..', 'results', nodes >= 100 ? 'daemonset.json' : 'daemonset-smoke.json');
const NS = 'bench';
const NAME = 'agent';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(what: string, check: () => Promise<T | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => false as const);
    if (value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function installCrd(rest: KubeRest): Promise<void> {
  const file = path.join(here, '..', '..', '..', 'deploy', 'crds', 'apps.kruise.io_daemonsets.yaml');
  const crd = parse(readFileSync(file, 'utf8')) as object;
  const crds = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  await rest.request({ method: 'POST', path: crds, body: crd });
  await waitFor(
    'the DaemonSet CRD established',
    async () => {
      const got = await rest.request<{ status?: { conditions?: { type: string; status: string }[] } }>({
        method: 'GET',
        path: `${crds}/daemonsets.apps.kruise.io`,
      });
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    },
    30_000,
  );
}

function daemonSet(): DaemonSetV1beta1 {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'DaemonSet',
    metadata: { name: NAME, namespace: NS },
    spec: {
      selector: { matchLabels: { app: NAME } },
      template: {
        metadata: { labels: { app: NAME } },
        spec: { containers: [{ name: 'main', image: 'registry.local/agent:v1' }] },
      },
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible', maxUnavailable: '100%' },
      },
    },
  };
}

const sets = Resources.daemonSets;

/** Every node updated, ready and available at `generation`. */
async function rolledOut(rest: KubeRest, generation: number): Promise<boolean> {
  const ds = await rest.request<DaemonSetV1beta1>({ method: 'GET', path: resourcePath(sets, NS, NAME) });
  const s = ds.status;
  return (
    ds.metadata?.generation === generation &&
    s?.observedGeneration === generation &&
    s.desiredNumberScheduled === nodes &&
    s.updatedNumberScheduled === nodes &&
    s.numberReady === nodes &&
    s.numberAvailable === nodes
  );
}

async function podUids(rest: KubeRest): Promise<Set<string>> {
  const list = await rest.request<{ items: Pod[] }>({ method: 'GET', path: resourcePath(Resources.pods, NS) });
  return new Set(list.items.map((p) => p.metadata.uid ?? ''));
}

interface Phase {
  seconds: number;
  podsPerSecond: number;
  cpuMsPerPod: number;
}

async function phase(write: () => Promise<unknown>, done: () => Promise<boolean>): Promise<Phase> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await write();
  await waitFor('the phase to finish', async () => (await done()) || false, 10 * 60_000);
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return {
    seconds: Number(seconds.toFixed(2)),
    podsPerSecond: Number((nodes / seconds).toFixed(1)),
    cpuMsPerPod: Number(((used.user + used.system) / 1000 / nodes).toFixed(2)),
  };
}

async function main(): Promise<void> {
  console.log(`starting a cluster with ${nodes} kwok nodes`);
  const cluster = await startCluster({ name: 'ads-bench', nodes });
  const rest = createKubeRest(cluster.kubeConfig());
  const logger = pino({ level: process.env.FLOTILLA_BENCH_LOG ?? 'silent' });
  const manager = new Manager({
    logger,
    metrics: new RuntimeMetrics(new Registry()),
    listWatcherFor: (resource, options) => kubeListWatcher(cluster.kubeConfig(), rest, resource, options),
    shutdownTimeoutMs: 5000,
  });
  try {
    await installCrd(rest);
    await rest.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: NS } } });
    const events = new EventRecorder({ sink: kubeEventSink(rest), component: 'bench', instance: 'bench', logger });
    registerDaemonSetController(manager, { rest, events });
    const running = manager.start();
    await waitFor('caches synced', () => Promise.resolve(manager.hasSynced()), 60_000);

    const create = await phase(
      () => rest.request({ method: 'POST', path: resourcePath(sets, NS), body: daemonSet() }),
      () => rolledOut(rest, 1),
    );
    console.log(`create: ${nodes} pods in ${create.seconds} s (${create.podsPerSecond} pods/s)`);
    const before = await podUids(rest);
    const inPlaceUpdate = await phase(
      () =>
        rest.request({
          method: 'PATCH',
          path: resourcePath(sets, NS, NAME),
          contentType: PatchType.merge,
          body: { spec: { template: { spec: { containers: [{ name: 'main', image: 'registry.local/agent:v2' }] } } } },
        }),
      () => rolledOut(rest, 2),
    );
    const after = await podUids(rest);
    const recreated = [...after].filter((uid) => !before.has(uid)).length;
    console.log(
      `in-place update: ${nodes} pods in ${inPlaceUpdate.seconds} s (${inPlaceUpdate.podsPerSecond} pods/s), recreated ${recreated}`,
    );
    const results = { date: new Date().toISOString(), nodes, create, inPlaceUpdate, recreated };
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`results: ${path.relative(process.cwd(), out)}`);
    await manager.stop('bench over');
    await running.catch(() => undefined);
  } finally {
    await cluster.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
