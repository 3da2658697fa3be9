// Measures ImagePullJobs end to end on real containerd: one cluster, two fake nodes each with its
// own containerd and `agent daemon`, the controllers in-process, a local registry. Reports the
// time from creating a job to its completion (one image, both nodes), the same with parallelism 1,
// ten jobs at once, and the daemons' resident memory. Writes test/bench/imagepull/results.json.
// Run (as root, containerd and docker-registry installed):
//   npx tsx --conditions=@flotilla/source test/bench/imagepull/bench.ts
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { format } from 'prettier';
import { pushTinyImage, readRssBytes, startEnvironment } from '../../env/src/index.js';
import { testNamespace } from '../../integration/helpers/kube.js';
import { startImagePullEnv, type ImagePullEnv } from '../../integration/imagepull/env.js';
import { createJob, waitForJob } from '../../integration/imagepull/jobs.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const round = (ms: number): number => Math.round(ms);

const world = await startEnvironment({ clusters: [{ name: 'ipbench', nodes: 1 }] });
const c = world.clusters[0]!;
const env = await startImagePullEnv({
  cluster: {
    name: c.name,
    server: c.server,
    kubeconfig: c.kubeconfig,
    kubeconfigPath: c.kubeconfigPath,
    nodeNames: [],
  },
  dir: world.dir,
  logLevel: 'warn',
});

/** Creates a job for a fresh image and resolves the ms until it completed. */
async function jobLatency(e: ImagePullEnv, ns: string, name: string, spec: Record<string, unknown>): Promise<number> {
  const img = await pushTinyImage(e.registry, { repository: `bench/${name}`, tag: 'v1', files: { f: name } });
  const t0 = performance.now();
  await createJob(e, ns, name, { image: img.ref, ...spec });
  await waitForJob(e, ns, name, 'completed', (s) => Boolean(s.completionTime) && s.succeeded === s.desired, 120_000);
  return performance.now() - t0;
}

try {
  const ns = await testNamespace(env.k, 'ipbench');
  const sequential: number[] = [];
  for (let i = 0; i < 5; i++) sequential.push(await jobLatency(env, ns, `seq-${i}`, { parallelism: 2 }));
  const oneAtATime: number[] = [];
  for (let i = 0; i < 3; i++) oneAtATime.push(await jobLatency(env, ns, `p1-${i}`, { parallelism: 1 }));
  const t0 = performance.now();
  const concurrent = await Promise.all(
    Array.from({ length: 10 }, (_, i) => jobLatency(env, ns, `burst-${i}`, { parallelism: 2 })),
  );
  const burstMs = performance.now() - t0;
  const sorted = [...sequential].sort((a, b) => a - b);
  const result = {
    measuredAt: new Date().toISOString(),
    nodes: env.nodes.length,
    jobCompletionMs: {
      parallelism2: { median: round(sorted[2]!), min: round(sorted[0]!), max: round(sorted[4]!) },
      parallelism1: oneAtATime.map(round),
      tenJobsAtOnce: { wallMs: round(burstMs), slowestJobMs: round(Math.max(...concurrent)) },
    },
    daemonRssMiB: env.nodes.map((n) => Math.round((readRssBytes(n.daemon.pid) / 1024 / 1024) * 10) / 10),
  };
  console.log(JSON.stringify(result, null, 2));
  // Formatted as the repository's Prettier check expects, so a fresh run can be committed as is.
  writeFileSync(path.join(here, 'results.json'), await format(JSON.stringify(result), { parser: 'json' }));
} finally {
  await env.stop();
  await world.stop();
}
