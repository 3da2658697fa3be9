/**
 * Pre-pull of the next wave end to end (issue 26, item 3) with REAL agents and a REAL pull: two
 * harness clusters, each with a real agent process (hub link, CloneSet, ImagePullJob and NodeImage
 * controllers); in cluster B one fake (kwok) node with its own containerd and `agent daemon`,
 * pulling from a local registry. The CloneSet's pods go to that node there (a nodeSelector in B's
 * override), so the hub's pre-pull job must select it. Wave 1 is A, wave 2 is B: while A soaks the
 * hub places an ImagePullJob on B, which the agent completes on real containerd; B starts only once
 * the pull is over, and then its job is tombstoned and deleted.
 *
 * The clusters are shared with other suites: the agents' controllers watch this suite's namespace,
 * and the job and node controllers only objects carrying the suite's label (test/fleet/agent), which
 * the jobs get from the workload's labels.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Rollout } from '@flotilla/api';
import { fakeNode, pushTinyImage, type PushedImage } from '@flotilla/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../fleet/fleet.js';
import { missingNodeDaemonTools, startNodeDaemons, type NodeDaemons } from '../../fleet/node-daemons.js';
import { cloneSetReader, settledAt, startRollout, type CloneSetView } from '../../fleet/workload.js';
import { clusters } from '../helpers/context.js';
import { customResource, eventually, kube, type Kube } from '../helpers/kube.js';

const SCOPE_KEY = 'flotilla.test/prepull';
const REPLICAS = 2;
const TERMINAL = ['Succeeded', 'Failed', 'Aborted', 'RolledBack'];

interface JobView {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { image: string; selector?: { matchLabels?: Record<string, string> } };
  status?: { desired?: number; succeeded?: number; failed?: number; completionTime?: string };
}

const suite = Math.random().toString(36).slice(2, 7);
const ns = `prepull-e2e-${suite}`;
const node = `pp-${suite}`;
const scope = { [SCOPE_KEY]: suite };
let fleet: Fleet;
let daemons: NodeDaemons;
let a = '';
let b = '';
let kb: Kube;
const readers = new Map<string, (namespace: string, name: string) => Promise<CloneSetView | undefined>>();

beforeAll(async () => {
  const missing = missingNodeDaemonTools();
  if (missing) throw new Error(`this suite needs ${missing} (scripts/setup.sh installs it)`);
  const [ca, cb] = clusters();
  if (!ca || !cb) throw new Error('this suite needs FLOTILLA_TEST_CLUSTERS >= 2');
  [a, b] = [`pp-${ca.name}`, `pp-${cb.name}`];
  kb = kube(cb);
  // B's node: played by kwok (pods on it become ready), pulled to by its own containerd.
  const n = fakeNode(node, 0);
  n.metadata!.labels = { ...n.metadata!.labels, ...scope };
  await kb.core.createNode({ body: n });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-prepull-e2e-'));
  const started = startNodeDaemons({
    dir: path.join(dir, 'nodes'),
    clusters: [{ name: b, kubeconfigPath: cb.kubeconfigPath, nodeNames: [node] }],
  });
  started.catch(() => undefined); // awaited below
  const t0 = performance.now();
  fleet = await startFleet({
    dir: path.join(dir, 'fleet'),
    env: process.env,
    namespace: ns,
    scopeControllers: true,
    scopeLabel: `${SCOPE_KEY}=${suite}`,
    components: 'cloneset,hublink,imagepulljob,nodeimage',
    members: [
      { name: a, cluster: ca, labels: { fleet: `pp-${suite}` } },
      { name: b, cluster: cb, labels: { fleet: `pp-${suite}` } },
    ],
    rolloutTickMs: 200,
  });
  daemons = await started;
  readers.set(a, cloneSetReader(ca.kubeconfigPath));
  readers.set(b, cloneSetReader(cb.kubeconfigPath));
  console.log(`[pre-pull e2e] fleet and node daemon up in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}, 240_000);

afterAll(async () => {
  await fleet?.stop();
  await daemons?.stop();
  await kb?.core.deleteNode({ name: node }).catch(() => undefined);
  // The node's NodeImage: its controller stopped with the agent, before the node went.
  await kb?.custom.deleteClusterCustomObject({ ...customResource('NodeImage'), name: node }).catch(() => undefined);
  await Promise.all(
    clusters()
      .slice(0, 2)
      .map((c) =>
        kube(c)
          .core.deleteNamespace({ name: ns })
          .catch(() => undefined),
      ),
  );
});

/** The workload's template at `image`: labelled for the suite, B's pods on B's daemon node. */
const template = (image: string) => ({
  metadata: { labels: scope },
  spec: {
    replicas: REPLICAS,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image }] } },
    updateStrategy: { maxUnavailable: '100%' },
  },
  placement: { clusterSelector: { matchLabels: { fleet: `pp-${suite}` } } },
  overrides: { [b]: { template: { spec: { nodeSelector: scope } } } },
});

async function jobsInB(): Promise<JobView[]> {
  const res = (await kb.custom.listNamespacedCustomObject({ ...customResource('ImagePullJob'), namespace: ns })) as {
    items: JobView[];
  };
  return res.items;
}

const byName = (r: Rollout) => Object.fromEntries(r.clusters.map((c) => [c.name, c]));
const story = (r: Rollout): string =>
  `${r.message} | ${r.clusters.map((c) => `${c.name}: ${c.phase} ${c.waitingFor ?? ''} (${c.message})`).join('; ')}`;

describe('pre-pull of the next wave, on real containerd', () => {
  it('places the next wave’s ImagePullJob during the soak, pulls on the node, then starts the wave', async () => {
    const t0 = performance.now();
    const images: PushedImage[] = [];
    for (const tag of ['v1', 'v2']) {
      images.push(await pushTinyImage(daemons.registry, { repository: `${suite}/web`, tag }));
    }
    const [v1, v2] = images.map((i) => i.ref) as [string, string];
    const { id } = await fleet.api<{ id: string }>('POST', '/workloads', {
      kind: 'CloneSet',
      name: 'web',
      namespace: ns,
      updatePolicy: 'Rollout',
      ...template(v1),
    });
    await eventually(`web at ${v1} on both clusters`, async () => {
      const all = await Promise.all([a, b].map((n) => readers.get(n)!(ns, 'web')));
      return all.every((cs) => settledAt(cs, v1, REPLICAS));
    });
    expect((await kb.core.listNamespacedPod({ namespace: ns })).items.map((p) => p.spec?.nodeName)).toEqual([
      node,
      node,
    ]);
    expect((await fleet.api<{ revision: number }>('PUT', `/workloads/${id}`, template(v2))).revision).toBe(2);
    // kwok plays the pods and pulls nothing: v2 reaches the node only through the pre-pull.
    expect(await daemons.containerd(b, node).listImages()).not.toContain(v2);

    const r0 = await startRollout(fleet, id, {
      waves: [
        { name: 'a', clusters: { names: [a] }, soakSeconds: 5 },
        { name: 'b', clusters: { names: [b] } },
      ],
      prePull: { maxWaitSeconds: 60 },
    });
    // What B waited for before it started, as the status API said it.
    const waitedFor = new Set<string>();
    const sample = async (): Promise<Rollout> => {
      const r = await fleet.rollout(r0.id);
      const { phase, waitingFor } = byName(r)[b]!;
      if (phase === 'Pending' && waitingFor) waitedFor.add(waitingFor);
      return r;
    };

    // While A soaks, the hub's job is in B's apiserver, for v2 on the node the pods may use.
    const [job] = await eventually('the pre-pull job in B', async () => {
      const list = await jobsInB();
      return list.length > 0 && list;
    });
    const soaking = await sample();
    expect(byName(soaking)[a]!.phase, story(soaking)).toBe('Soaking');
    expect(byName(soaking)[b]!.phase, story(soaking)).toBe('Pending');
    expect(job).toMatchObject({
      metadata: { labels: scope },
      spec: { image: v2, selector: { matchLabels: scope } },
    });
    expect(job!.metadata.name).toMatch(/^web-prepull-/);
    expect(await jobsInB()).toHaveLength(1);

    // The agent completed it on the node's containerd, and the node really holds the image.
    const done = await eventually(
      'the pre-pull job completed',
      async () => {
        await sample();
        const j = (await jobsInB()).find((x) => x.metadata.name === job!.metadata.name);
        return j?.status?.completionTime ? j : undefined;
      },
      60_000,
      150,
    );
    expect(done.status).toMatchObject({ desired: 1, succeeded: 1, failed: 0 });
    expect(await daemons.containerd(b, node).listImages()).toContain(v2);
    const key = v2.slice(0, v2.lastIndexOf(':'));
    const nodeImage = (await kb.custom.getClusterCustomObject({ ...customResource('NodeImage'), name: node })) as {
      status?: { imageStatuses?: Record<string, { tags: { tag: string; phase: string; imageID?: string }[] }> };
    };
    expect(nodeImage.status?.imageStatuses?.[key]?.tags.find((t) => t.tag === 'v2')).toMatchObject({
      phase: 'Succeeded',
      imageID: `${key}@${images[1]!.configDigest}`,
    });

    // B started once the pull was over (waiting for it if the soak was shorter), not before.
    const started = await eventually(
      'wave b started',
      async () => {
        const r = await sample();
        return byName(r)[b]!.startedAt ? r : undefined;
      },
      90_000,
      150,
    );
    expect(Date.parse(byName(started)[b]!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(done.status!.completionTime!));
    expect([...waitedFor].filter((w) => w !== 'prePull')).toEqual(['previousWave']);

    // Once B started, its job went: a tombstone at the hub, gone from B's apiserver.
    await eventually('the pre-pull job deleted from B', async () => (await jobsInB()).length === 0);
    const rows = await fleet.pool.query<{ cluster_name: string; deleted: boolean }>(
      `select cluster_name, deleted from desired_objects where workload_id = $1 and kind = 'ImagePullJob'`,
      [r0.id],
    );
    expect(rows.rows).toEqual([{ cluster_name: b, deleted: true }]);

    const final = await eventually(
      'the rollout finished',
      async () => {
        const r = await sample();
        return TERMINAL.includes(r.phase) ? r : undefined;
      },
      60_000,
      150,
    );
    expect(final.phase, story(final)).toBe('Succeeded');
    expect(final.waves[1]!.prePull?.endedAt).toBeTruthy();
    const events = await fleet.pool.query<{ message: string }>(
      'select message from rollout_events where rollout_id = $1 order by id',
      [r0.id],
    );
    expect(events.rows.map((e) => e.message)).toContain('pre-pull of wave "b" finished');
    await eventually(`web at ${v2} on both clusters`, async () => {
      const all = await Promise.all([a, b].map((n) => readers.get(n)!(ns, 'web')));
      return all.every((cs) => settledAt(cs, v2, REPLICAS));
    });
    console.log(
      `[pre-pull e2e] rollout done in ${((performance.now() - t0) / 1000).toFixed(1)} s; B waited for: ${[...waitedFor].join(', ')}`,
    );
  });
});
