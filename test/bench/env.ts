// Measures the test environment: time to start one cluster and three, and resident memory per
// cluster (apiserver, controller-manager, scheduler, kwok) once idle and after 100 pods.
// Prints a summary and writes test/bench/results/env.json. Run: npm run bench:env
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import { readRssBytes, startEnvironment } from '../env/src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const mib = (b: number): number => Math.round((b / 1024 / 1024) * 10) / 10;

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const v = await fn();
  return [v, (performance.now() - t0) / 1000];
}

const [one, oneSeconds] = await timed(() => startEnvironment({ clusters: [{ name: 'solo', nodes: 3 }] }));
await one.stop();

const [three, threeSeconds] = await timed(() =>
  startEnvironment({
    clusters: [
      { name: 'b1', nodes: 3 },
      { name: 'b2', nodes: 3 },
      { name: 'b3', nodes: 3 },
    ],
  }),
);
const idle = three.clusters.map((c) => c.memoryBytes());
const core = three.clusters[0]!.kubeConfig().makeApiClient(CoreV1Api);
await core.createNamespace({ body: { metadata: { name: 'bench' } } });
for (let i = 0; i < 100; i++) {
  await core.createNamespacedPod({
    namespace: 'bench',
    body: { metadata: { name: `p${i}` }, spec: { containers: [{ name: 'c', image: 'registry.local/app:v1' }] } },
  });
}
for (;;) {
  const pods = await core.listNamespacedPod({ namespace: 'bench' });
  if (
    pods.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length ===
    100
  )
    break;
  await new Promise((r) => setTimeout(r, 500));
}
const loaded = three.clusters[0]!.memoryBytes();
const etcdRss = readRssBytes(three.etcd.process.pid);
await three.stop();

const result = {
  measuredAt: new Date().toISOString(),
  startOneClusterSeconds: Math.round(oneSeconds * 10) / 10,
  startThreeClustersSeconds: Math.round(threeSeconds * 10) / 10,
  perClusterStartSeconds: three.startSeconds.map((s) => Math.round(s * 10) / 10),
  memoryPerClusterIdleMiB: idle.map(mib),
  memoryClusterWith100PodsMiB: mib(loaded),
  sharedEtcdMiB: mib(etcdRss),
};
console.log(JSON.stringify(result, null, 2));
mkdirSync(path.join(here, 'results'), { recursive: true });
writeFileSync(path.join(here, 'results', 'env.json'), JSON.stringify(result, null, 2) + '\n');
