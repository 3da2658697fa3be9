// The README's main job: a local fleet (Kubernetes control planes with kwok nodes, Postgres,
// NATS, the hub and one agent per cluster running every controller, the admission webhook and,
// where containerd is installed, the node daemon on every node), a SidecarSet and a CloneSet
// placed on every cluster (the sidecar lands in the CloneSet's pods), an ImagePullJob pre-pulling
// the new image on every node, and that image rolled out in waves — canary first, with an
// in-cluster canary step — printing each step as it happens and where to look next. `--once`
// exits after the rollout (0 when it succeeded), otherwise the fleet stays up until Ctrl-C.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RolloutEvent } from '@flotilla/api';
import { pushTinyImage, toolPath } from '@flotilla/test';
import { startFleet, type Fleet } from '../fleet/fleet.js';
import { missingNodeDaemonTools, startNodeDaemons, type NodeDaemons } from '../fleet/node-daemons.js';
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
import { demoClusters, SCOPE_KEY } from './clusters.js';
import { clusterReader, placeImagePullJob, placeSidecarSet, type ClusterReader } from './showcase.js';

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

if (process.env.FLOTILLA_DEMO_KUBECONFIGS) {
  say(
    'joining the clusters of FLOTILLA_DEMO_KUBECONFIGS (shared: everything of this run is scoped to its namespaces)...',
  );
} else {
  say(`starting ${clusterCount} Kubernetes clusters (kube-apiserver, controller-manager, scheduler, kwok nodes)...`);
}
const env = await demoClusters(clusterCount, dir, process.env);
const names = env.clusters.map((c) => c.name);
say(`clusters up: ${names.join(', ')}`);
/** The SidecarSet's one container, injected into the CloneSet's pods. */
const SIDECAR = 'log-agent';
/** On shared clusters the SidecarSet (cluster-scoped) and the ImagePullJob carry the run's label. */
const sidecarSetName = env.shared ? `${SIDECAR}-${env.shared.id}` : SIDECAR;
const scopeLabels: Record<string, string> = env.shared ? { [SCOPE_KEY]: env.shared.id } : {};

let fleet: Fleet | undefined;
let daemons: NodeDaemons | undefined;
const shutdown = async (): Promise<void> => {
  await fleet?.stop();
  await daemons?.stop();
  await env.stop();
};

try {
  const missing = missingNodeDaemonTools();
  // The daemons start beside the hub and agents: they only need the clusters.
  const daemonsStarted = missing
    ? undefined
    : startNodeDaemons({
        dir: path.join(env.dir, 'nodes'),
        clusters: env.clusters.map((c) => ({ name: c.name, kubeconfigPath: c.kubeconfigPath, nodeNames: c.nodeNames })),
      });
  daemonsStarted?.catch(() => undefined); // awaited below
  say(
    'starting Postgres database, a 3-node TLS NATS cluster, the hub and one agent per cluster (every controller, the webhook); accepting the clusters...',
  );
  if (missing) {
    say(`node daemon: skipped — ${missing} is not installed on this machine (scripts/setup.sh installs it)`);
  } else {
    say('node daemon: a registry, and a containerd and an `agent daemon` per node, starting...');
  }
  fleet = await startFleet({
    dir: path.join(env.dir, 'fleet'),
    env: process.env,
    namespace: env.agentNamespace,
    ...(env.shared
      ? { scopeControllers: true, workloadNamespace: env.namespace, scopeLabel: env.shared.label, crdsInstalled: true }
      : {}),
    members: env.clusters.map((c, i) => ({
      name: c.name,
      cluster: c,
      labels: { fleet: 'demo', ring: i === 0 ? 'canary' : 'main', region: i % 2 === 0 ? 'eu' : 'us' },
    })),
    components: '*',
    webhook: true,
    rolloutTickMs: 500,
    logLevel: 'info',
  });
  say(`hub ${fleet.hubUrl()} — ${names.length} clusters accepted, agents online`);
  daemons = await daemonsStarted;
  if (daemons) {
    for (const [repository, tag] of [
      ['web', '1.0'],
      ['web', '1.1'],
      ['log-agent', '1.0'],
    ] as const) {
      await pushTinyImage(daemons.registry, { repository, tag });
    }
    const nodes = [...daemons.nodes.values()].reduce((n, list) => n + list.length, 0);
    say(`node daemon: ${nodes} nodes ready, pulling from the registry ${daemons.registry.host}`);
  }
  const succeeded = await rolloutDemo(fleet, daemons?.registry.host ?? 'registry.local');
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

async function rolloutDemo(f: Fleet, registry: string): Promise<boolean> {
  const w: CloneSetWorkload = {
    name: 'web',
    namespace: env.namespace,
    replicas: 4,
    image: `${registry}/web:1.0`,
    selector: { fleet: 'demo' },
  };
  const readers = new Map(env.clusters.map((c) => [c.name, cloneSetReader(c.kubeconfigPath)]));
  const read = (cluster: string): Promise<CloneSetView | undefined> => readers.get(cluster)!(w.namespace, w.name);
  const kube = new Map(env.clusters.map((c) => [c.name, clusterReader(c.kubeconfigPath)]));

  await sidecarDemo(f, kube, registry, w);
  const id = await createCloneSetWorkload(f, w);
  say(`CloneSet ${w.namespace}/${w.name} (${w.replicas} replicas, ${w.image}) placed on every cluster: workload ${id}`);
  for (const name of names) {
    await waitUntil(`${name} runs ${w.image}`, async () => settledAt(await read(name), w.image, w.replicas));
  }
  say(`revision 1 (${w.image}) runs on all ${clusterCount} clusters`);
  for (const name of names) {
    const { pods, injected } = await kube.get(name)!.sidecarCount(w.namespace, w.name, sidecarSetName, SIDECAR);
    say(`  ${name}: sidecar ${SIDECAR} injected into ${injected}/${pods} pods of ${w.namespace}/${w.name}`);
  }

  const image = `${registry}/web:1.1`;
  const revision = await setImage(f, id, w, image);
  say(`new image ${image} = revision ${revision}; updatePolicy Rollout: no cluster moves until a rollout says so`);
  await prePull(f, kube, image, w);
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

/** A SidecarSet on every cluster; waits until each cluster's webhook injects it. */
async function sidecarDemo(
  f: Fleet,
  kube: Map<string, ClusterReader>,
  registry: string,
  w: CloneSetWorkload,
): Promise<void> {
  const image = `${registry}/${SIDECAR}:1.0`;
  const id = await placeSidecarSet(f, {
    name: sidecarSetName,
    container: SIDECAR,
    labels: scopeLabels,
    namespace: w.namespace,
    app: w.name,
    image,
    selector: w.selector,
  });
  say(
    `SidecarSet ${sidecarSetName} (${image}, for pods app=${w.name} in ${w.namespace}) placed on every cluster: workload ${id}`,
  );
  for (const name of names) {
    await waitUntil(`${name}'s webhook injects ${SIDECAR}`, () =>
      kube.get(name)!.injects(w.namespace, w.name, sidecarSetName, SIDECAR),
    );
  }
  say(`the webhook of every cluster's agent injects ${SIDECAR} into new ${w.name} pods`);
}

/** An ImagePullJob pulls the new image onto every node of the fleet before any pod needs it. */
async function prePull(f: Fleet, kube: Map<string, ClusterReader>, image: string, w: CloneSetWorkload): Promise<void> {
  const name = `${w.name}-prepull`;
  const id = await placeImagePullJob(f, {
    name,
    namespace: w.namespace,
    image,
    selector: w.selector,
    labels: scopeLabels,
  });
  say(`ImagePullJob ${w.namespace}/${name} (${image}, every node) placed on every cluster: workload ${id}`);
  if (!daemons) {
    say('  no node daemon on this machine: no node reports pulls, so the demo does not wait for the job');
    return;
  }
  for (const cluster of names) {
    let status: Awaited<ReturnType<ClusterReader['pullJob']>>;
    await waitUntil(`${cluster} pre-pulls ${image}`, async () => {
      status = await kube.get(cluster)!.pullJob(w.namespace, name);
      return status !== undefined && status.completed;
    });
    say(`  ${cluster}: image ${image} pre-pulled on ${status!.succeeded}/${status!.desired} nodes`);
  }
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
                  npx flotilla clusters list; npx flotilla workloads status ${env.namespace}/web; npx flotilla rollouts list ${env.namespace}/web
  clusters`);
  for (const c of env.clusters) {
    console.log(
      `    ${c.name.padEnd(10)} ${kubectl} --kubeconfig ${c.kubeconfigPath} get sidecarsets,clonesets,imagepulljobs,pods -n ${env.namespace}`,
    );
  }
  console.log(`  logs            ${env.dir} (fleet/hub.log, fleet/agent-<cluster>.log, nodes/ for the registry, containerds and daemons, one folder per cluster)
  Postgres        ${f.database.url}`);
}
