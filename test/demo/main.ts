// The README's main job: a local fleet (Kubernetes control planes with kwok nodes, Postgres,
// NATS, the hub and one agent per cluster), a CloneSet placed on every cluster, and a new image
// rolled out in waves — canary first, with an in-cluster canary step — printing each wave's
// progress as it happens and where to look next. `--once` exits after the rollout (0 when it
// succeeded), otherwise the fleet stays up until Ctrl-C.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RolloutEvent } from '@flotilla/api';
import { startEnvironment, toolPath } from '@flotilla/test';
import { startFleet, type Fleet } from '../fleet/fleet.js';
import {
  cloneSetReader,
  createCloneSetWorkload,
  followEvents,
  setImage,
  settledAt,
  startRollout,
  type CloneSetView,
  type CloneSetWorkload,
} from '../fleet/workload.js';

const clusterCount = Number(process.env.FLOTILLA_DEMO_CLUSTERS ?? 4);
const dir = path.resolve(process.env.FLOTILLA_DEMO_DIR ?? '.cache/demo');
const once = process.argv.includes('--once');
if (!Number.isInteger(clusterCount) || clusterCount < 2 || clusterCount > 6) {
  console.error('FLOTILLA_DEMO_CLUSTERS must be a whole number from 2 to 6');
  process.exit(2);
}

const t0 = performance.now();
const elapsed = (): string => `[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s]`;
const say = (line: string): void => console.log(`${elapsed()} ${line}`);

const names = Array.from({ length: clusterCount }, (_, i) => `cluster-${String.fromCharCode(97 + i)}`);
say(`starting ${clusterCount} Kubernetes clusters (kube-apiserver, controller-manager, scheduler, kwok nodes)...`);
const env = await startEnvironment({ clusters: names.map((name) => ({ name, nodes: 2 })), dir, keep: true });
say(`clusters up: ${env.clusters.map((c) => c.name).join(', ')}`);

let fleet: Fleet | undefined;
const shutdown = async (): Promise<void> => {
  await fleet?.stop();
  await env.stop();
};

try {
  say(
    'starting Postgres database, a 3-node TLS NATS cluster, the hub and one agent per cluster; accepting the clusters...',
  );
  fleet = await startFleet({
    dir: path.join(env.dir, 'fleet'),
    env: process.env,
    namespace: 'flotilla-system',
    members: env.clusters.map((c, i) => ({
      name: c.name,
      cluster: c,
      labels: { fleet: 'demo', ring: i === 0 ? 'canary' : 'main', region: i % 2 === 0 ? 'eu' : 'us' },
    })),
    rolloutTickMs: 500,
    logLevel: 'info',
  });
  say(`hub ${fleet.hubUrl()} — ${clusterCount} clusters accepted, agents online`);
  const succeeded = await rolloutDemo(fleet);
  printWhereToLook(fleet);
  if (once) {
    await shutdown();
    process.exit(succeeded ? 0 : 1);
  }
  console.log('\nThe fleet keeps running. Press Ctrl-C to stop it.');
  const stop = (): void => {
    console.log('\nstopping...');
    shutdown().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (err) {
  console.error(err);
  console.error(`\nlogs: ${env.dir}`);
  await shutdown().catch(() => undefined);
  process.exit(1);
}

async function rolloutDemo(f: Fleet): Promise<boolean> {
  const w: CloneSetWorkload = {
    name: 'web',
    namespace: 'default',
    replicas: 4,
    image: 'registry.local/web:1.0',
    selector: { fleet: 'demo' },
  };
  const readers = new Map(env.clusters.map((c) => [c.name, cloneSetReader(c.kubeconfigPath)]));
  const read = (cluster: string): Promise<CloneSetView | undefined> => readers.get(cluster)!(w.namespace, w.name);

  const id = await createCloneSetWorkload(f, w);
  say(`CloneSet ${w.namespace}/${w.name} (${w.replicas} replicas, ${w.image}) placed on every cluster: workload ${id}`);
  for (const name of names) {
    await waitUntil(`${name} runs ${w.image}`, async () => settledAt(await read(name), w.image, w.replicas));
  }
  say(`revision 1 (${w.image}) runs on all ${clusterCount} clusters`);

  const image = 'registry.local/web:1.1';
  const revision = await setImage(f, id, w, image);
  say(`new image ${image} = revision ${revision}; updatePolicy Rollout: no cluster moves until a rollout says so`);
  const strategy = {
    waves: [
      {
        name: 'canary',
        clusters: { selector: { matchLabels: { ring: 'canary' } } },
        // In the canary cluster, half of the pods first, then all of them.
        canarySteps: [{ partition: '50%', pauseSeconds: 3 }],
        soakSeconds: 3,
        progressDeadlineSeconds: 60,
      },
      { name: 'main', orderBy: 'region', maxConcurrency: 2, soakSeconds: 2, progressDeadlineSeconds: 60 },
    ],
  };
  const rollout = await startRollout(f, id, strategy);
  say(`rollout ${rollout.id}: ${rollout.waves.map((x) => `${x.name} [${x.members.join(', ')}]`).join(' → ')}`);

  // Pod counts per cluster as they change, beside the hub's own events.
  const watching = new AbortController();
  const counts = watchPods(read, image, w.replicas, watching.signal);
  await followEvents(f, rollout.id, (e: RolloutEvent) => say(`  ${e.wave ? `${e.wave}: ` : ''}${e.message}`));
  watching.abort();
  await counts;

  const final = await f.rollout(rollout.id);
  say(`rollout ${final.phase}: ${final.message}`);
  for (const wave of final.waves) {
    const span =
      wave.startedAt && wave.finishedAt ? (Date.parse(wave.finishedAt) - Date.parse(wave.startedAt)) / 1000 : 0;
    console.log(`         wave ${wave.name.padEnd(7)} ${wave.phase.padEnd(10)} ${span.toFixed(1)} s  ${wave.message}`);
  }
  for (const name of names) {
    const cs = await read(name);
    console.log(
      `         ${name.padEnd(10)} ${cs?.image ?? '-'}  ${cs?.status.updatedReadyReplicas ?? 0}/${w.replicas} pods updated and ready`,
    );
  }
  return final.phase === 'Succeeded';
}

/** Prints "cluster-a: 2/4 pods on web:1.1" whenever a cluster's count of updated ready pods changes. */
async function watchPods(
  read: (cluster: string) => Promise<CloneSetView | undefined>,
  image: string,
  replicas: number,
  signal: AbortSignal,
): Promise<void> {
  const last = new Map<string, string>();
  while (!signal.aborted) {
    for (const name of names) {
      const cs = await read(name).catch(() => undefined);
      // Counts of a status the controller has not caught up with yet would be the old revision's.
      if (!cs || cs.image !== image || cs.status.observedGeneration !== cs.generation) continue;
      const partition = cs.partition === undefined ? '' : `, partition ${cs.partition}`;
      const line = `${cs.status.updatedReadyReplicas ?? 0}/${replicas} pods ready on ${image.split('/').pop()}${partition}`;
      if (last.get(name) !== line) {
        last.set(name, line);
        say(`    ${name}: ${line}`);
      }
    }
    await sleep(300);
  }
}

async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(250);
  }
}

function printWhereToLook(f: Fleet): void {
  const kubectl = toolPath('kubectl');
  const auth = `--cacert ${f.hubCaFile} -H 'authorization: Bearer ${f.adminToken}'`;
  console.log(`
Where to look next
  hub REST API    ${f.hubUrl()}/api/v1   (OpenAPI: ${f.hubUrl()}/api/v1/openapi.json)
                  curl -s ${auth} ${f.hubUrl()}/api/v1/clusters
                  curl -s ${auth} ${f.hubUrl()}/api/v1/workloads
                  curl -sN ${auth} ${f.hubUrl()}/api/v1/rollouts/<id>/events
  dashboard       ${f.hubUrl()}/ui/   (sign in with the admin token above; the hub's CA is ${f.hubCaFile})
  CLI             npm run build; export FLOTILLA_HUB_URL=${f.hubUrl()} FLOTILLA_CA_FILE=${f.hubCaFile} FLOTILLA_TOKEN=${f.adminToken}
                  npx flotilla clusters list; npx flotilla workloads status default/web; npx flotilla rollouts list default/web
  clusters`);
  for (const c of env.clusters) {
    console.log(`    ${c.name.padEnd(10)} ${kubectl} --kubeconfig ${c.kubeconfigPath} get clonesets,pods -n default`);
  }
  console.log(`  logs            ${env.dir} (fleet/hub.log, fleet/agent-<cluster>.log, one folder per cluster)
  Postgres        ${f.database.url}`);
}
