// CloneSet controller benchmark on one harness cluster (kwok nodes), with the real `agent manager`
// process as the controller:
//   1. the apiserver's raw pod-create ceiling: a plain client loop creating 1,000 pods with the
//      same concurrency the controller uses (64 in flight);
//   2. scale 0 → 1,000 pods: pods/s until all exist (compare with the ceiling), and until ready;
//   3. in-place update of 1,000 pods (InPlaceIfPossible, maxUnavailable 100%) until all updated and ready;
//   4. agent resident memory with 5,000 pods in its caches (4,000 more pods kept Pending by a
//      nodeSelector no node has, so kwok is not the bottleneck).
// Prints the numbers and writes test/bench/results/cloneset.json.
// Run: npx tsx --conditions=@flotilla/source test/bench/cloneset/bench.ts
import { spawn, spawnSync } from 'node:child_process';
import https from 'node:https';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { parse } from 'yaml';
import type { CloneSet } from '@flotilla/api';
import { Informer } from '../../../agent/src/runtime/informer.js';
import { kubeListWatcher } from '../../../agent/src/runtime/kube-list-watch.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { createKubeRest, PatchType, type KubeRest } from '../../../agent/src/runtime/rest.js';
import { freePort, readRssBytes, startEnvironment } from '../../env/src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const PODS = 1000;
const CACHE_PODS = 5000;
const CONCURRENCY = 64;
const NODES = Math.ceil(PODS / 100) + 2;

const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;
const mib = (b: number): number => round(b / 1024 / 1024);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const log = (msg: string): void => void process.stderr.write(`[bench] ${msg}\n`);

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 600_000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

async function pooled<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) await fn(items[i]!);
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

async function installCrds(rest: KubeRest): Promise<void> {
  const dir = path.join(root, 'deploy/crds');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    const crd = parse(readFileSync(path.join(dir, file), 'utf8')) as { metadata: { name: string } };
    await rest.request({
      method: 'PATCH',
      path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
      query: { fieldManager: 'flotilla-bench', force: true },
      contentType: PatchType.apply,
      body: crd,
    });
  }
  await until('CloneSets served', async () => {
    try {
      await rest.request({ method: 'GET', path: resourcePath(Resources.cloneSets, 'default') });
      return true;
    } catch {
      return false;
    }
  });
}

async function namespace(rest: KubeRest, name: string): Promise<string> {
  await rest.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name } } });
  return name;
}

/** Pods in `ns` counted as the informer sees them. */
async function podCounter(kc: KubeConfig, rest: KubeRest, ns: string) {
  const informer = new Informer({
    name: `bench-${ns}`,
    listWatch: kubeListWatcher(kc, rest, Resources.pods, { namespace: ns }),
    logger: pino({ level: 'silent' }),
  });
  informer.start();
  await informer.waitForSync();
  return { informer, count: () => informer.keys().length };
}

/**
 * A KubeRest-shaped POST over one keep-alive https.Agent, to show what connection reuse would
 * gain: the runtime's client gets a fresh Agent (a new TLS connection) from applyToHTTPSOptions
 * on every request.
 */
async function keepAlivePoster(kc: KubeConfig): Promise<(path: string, body: unknown) => Promise<void>> {
  const tls: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  const agent = new https.Agent({ keepAlive: true, ca: tls.ca, cert: tls.cert, key: tls.key, maxSockets: CONCURRENCY });
  const server = kc.getCurrentCluster()!.server;
  return (p, body) =>
    new Promise((resolve, reject) => {
      const req = https.request(
        new URL(server + p),
        { method: 'POST', agent, headers: { ...(tls.headers ?? {}), 'Content-Type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
}

async function rawCeiling(
  rest: KubeRest,
  post?: (path: string, body: unknown) => Promise<void>,
): Promise<{ podsPerSecond: number; seconds: number; allReadySeconds: number }> {
  const ns = await namespace(rest, post ? 'raw-keepalive' : 'raw');
  const names = Array.from({ length: PODS }, (_, i) => `raw-${i}`);
  const t0 = performance.now();
  await pooled(names, CONCURRENCY, async (name) => {
    const body = {
      metadata: { name, labels: { app: 'raw' } },
      spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }] },
    };
    if (post) await post(resourcePath(Resources.pods, ns), body);
    else await rest.request({ method: 'POST', path: resourcePath(Resources.pods, ns), body });
  });
  const seconds = (performance.now() - t0) / 1000;
  // How fast kwok makes plain pods ready on this machine: the floor under "all ready" below.
  await until(
    'raw pods ready',
    async () => {
      const list = await rest.request<{ items: { status?: { conditions?: { type: string; status: string }[] } }[] }>({
        method: 'GET',
        path: resourcePath(Resources.pods, ns),
      });
      return (
        list.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
          .length === PODS
      );
    },
    600_000,
    500,
  );
  const readySeconds = (performance.now() - t0) / 1000;
  await rest.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` });
  // Their node capacity is needed by the next phase.
  await until(
    `namespace ${ns} gone`,
    async () => {
      try {
        await rest.request({ method: 'GET', path: `/api/v1/namespaces/${ns}` });
        return false;
      } catch {
        return true;
      }
    },
    600_000,
    1000,
  );
  return { podsPerSecond: round(PODS / seconds), seconds: round(seconds, 2), allReadySeconds: round(readySeconds, 2) };
}

function cloneSet(name: string, replicas: number, extra: Partial<CloneSet['spec']> = {}): CloneSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }] },
      },
      updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: '100%' },
      ...extra,
    },
  };
}

/** One unlabelled sample of the agent's /metrics (prom-client default process metrics). */
async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

async function status(rest: KubeRest, ns: string, name: string): Promise<NonNullable<CloneSet['status']>> {
  const cs = await rest.request<CloneSet>({ method: 'GET', path: resourcePath(Resources.cloneSets, ns, name) });
  return (
    cs.status ?? { replicas: 0, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0 }
  );
}

/** The agent from its build output when `tsc -b agent` succeeds (production-like memory), else through tsx. */
function agentCommand(): { args: string[]; runtime: string } {
  const built = spawnSync('npx', ['tsc', '-b', 'agent'], { cwd: root, stdio: 'ignore' }).status === 0;
  return built
    ? { args: [path.join(root, 'agent/dist/main.js')], runtime: 'node (agent/dist)' }
    : {
        args: ['--conditions=@flotilla/source', '--import', 'tsx', 'agent/src/main.ts'],
        runtime: 'node + tsx (sources)',
      };
}

log(`starting a cluster with ${NODES} kwok nodes`);
const env = await startEnvironment({ clusters: [{ name: 'bench', nodes: NODES }] });
const cluster = env.clusters[0]!;
const rest = createKubeRest(cluster.kubeConfig());
let stopAgent = (): void => {};
try {
  await installCrds(rest);
  log('raw pod-create ceiling');
  const ceiling = await rawCeiling(rest);
  log(`ceiling ${ceiling.podsPerSecond} pods/s`);
  const keepAliveCeiling = await rawCeiling(rest, await keepAlivePoster(cluster.kubeConfig()));
  log(`ceiling with a keep-alive agent ${keepAliveCeiling.podsPerSecond} pods/s`);

  const agent = agentCommand();
  const healthPort = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...agent.args,
      'manager',
      `--kubeconfig=${cluster.kubeconfigPath}`,
      '--cluster-name=bench',
      '--no-leader-elect',
      '--health-host=127.0.0.1',
      `--health-port=${healthPort}`,
      '--log-level=warn',
    ],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  // Readiness also waits for other parts (the webhook); the CloneSet controller runs once the caches synced.
  await until('agent caches synced', async () => {
    try {
      const res = await fetch(`http://127.0.0.1:${healthPort}/readyz?verbose`);
      return (await res.text()).includes('[+]informers-synced ok');
    } catch {
      return false;
    }
  });
  stopAgent = () => child.kill('SIGTERM');

  const ns = await namespace(rest, 'bench');
  const counter = await podCounter(cluster.kubeConfig(), rest, ns);
  log(`scale 0 → ${PODS}`);
  const t0 = performance.now();
  await rest.request({ method: 'POST', path: resourcePath(Resources.cloneSets, ns), body: cloneSet('web', PODS) });
  await until('all pods created', () => counter.count() >= PODS, 600_000, 20);
  const createdSeconds = (performance.now() - t0) / 1000;
  await until('all pods ready', async () => (await status(rest, ns, 'web')).readyReplicas === PODS, 600_000, 250);
  const readySeconds = (performance.now() - t0) / 1000;
  log(`created in ${round(createdSeconds, 2)} s, ready in ${round(readySeconds, 2)} s`);

  log(`in-place update of ${PODS} pods`);
  const t1 = performance.now();
  await rest.request({
    method: 'PATCH',
    path: resourcePath(Resources.cloneSets, ns, 'web'),
    contentType: PatchType.merge,
    body: { spec: { template: { spec: { containers: [{ name: 'main', image: 'registry.local/app:v2' }] } } } },
  });
  await until(
    'all pods updated and ready',
    async () => {
      const s = await status(rest, ns, 'web');
      return s.observedGeneration === 2 && s.updatedReadyReplicas === PODS && s.updatedReplicas === PODS;
    },
    600_000,
    250,
  );
  const updateSeconds = (performance.now() - t1) / 1000;
  log(`updated in ${round(updateSeconds, 2)} s`);

  log(`memory with ${CACHE_PODS} pods cached`);
  const rssWith1000 = readRssBytes(child.pid!);
  await rest.request({
    method: 'POST',
    path: resourcePath(Resources.cloneSets, ns),
    body: cloneSet('cache', CACHE_PODS - PODS, {
      template: {
        metadata: { labels: { app: 'cache' } },
        spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }], nodeSelector: { bench: 'nowhere' } },
      },
    }),
  });
  await until('all cache pods created', () => counter.count() >= CACHE_PODS, 900_000, 250);
  await until(
    'status caught up',
    async () => (await status(rest, ns, 'cache')).replicas === CACHE_PODS - PODS,
    300_000,
    500,
  );
  let rss = 0;
  for (let i = 0; i < 10; i++) {
    rss = Math.max(rss, readRssBytes(child.pid!));
    await sleep(1000);
  }
  const heapUsed = await metric(healthPort, 'nodejs_heap_size_used_bytes');
  await counter.informer.stop();

  const result = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, memoryGiB: round(os.totalmem() / 1024 ** 3) },
    cluster: { kwokNodes: NODES },
    agent: agent.runtime,
    rawCreateCeiling: { pods: PODS, concurrency: CONCURRENCY, client: 'runtime KubeRest (as the agent)', ...ceiling },
    rawCreateCeilingKeepAlive: {
      pods: PODS,
      concurrency: CONCURRENCY,
      client: 'one keep-alive https.Agent',
      ...keepAliveCeiling,
    },
    scaleUp: {
      pods: PODS,
      createdSeconds: round(createdSeconds, 2),
      createdPodsPerSecond: round(PODS / createdSeconds),
      percentOfCeiling: round((PODS / createdSeconds / ceiling.podsPerSecond) * 100),
      allReadySeconds: round(readySeconds, 2),
    },
    inPlaceUpdate: {
      pods: PODS,
      maxUnavailable: '100%',
      allUpdatedAndReadySeconds: round(updateSeconds, 2),
      podsPerSecond: round(PODS / updateSeconds),
    },
    agentMemory: {
      cachedPods: CACHE_PODS,
      rssMiB: mib(rss),
      heapUsedMiB: mib(heapUsed),
      rssWith1000PodsMiB: mib(rssWith1000),
      targetMiB: 250,
    },
  };
  console.log(JSON.stringify(result, null, 2));
  mkdirSync(path.join(here, '../results'), { recursive: true });
  writeFileSync(path.join(here, '../results/cloneset.json'), JSON.stringify(result, null, 2) + '\n');
} finally {
  stopAgent();
  await env.stop();
}
