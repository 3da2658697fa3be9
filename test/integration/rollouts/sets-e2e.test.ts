/**
 * Fleet rollouts of Advanced StatefulSets and Advanced DaemonSets with in-cluster partition
 * steps, end to end: the run's first two harness clusters, each with a REAL agent process (hub
 * link + StatefulSet and DaemonSet controllers, scoped to this suite's namespace and nodes), the
 * hub as its own process on a fresh Postgres database and a NATS cluster. A recorder samples what
 * the clusters really run (the pods first, then the set), and the assertions are about those
 * samples: each step's partition was in the set's spec and honoured by the pods (exactly the pods
 * the partition lets update ran the new revision, ready) before the next step's partition came.
 *
 * Waves: c1 is the canary (steps 3 then 50%), c2 the rest (step 2). Every set runs on four kwok
 * nodes of this suite's own (labelled and tainted), so no other suite's pods are involved.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Rollout } from '@flotilla/api';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startFleet, type Fleet } from '../../fleet/fleet.js';
import { startRollout } from '../../fleet/workload.js';
import { customResource, eventually, isPodReady, type Kube } from '../helpers/kube.js';
import { prepareFleetSuite, type FleetSuite } from './fleet-suite.js';

const V1 = 'registry.local/app:v1';
const V2 = 'registry.local/app:v2';
/** Pods of a StatefulSet; nodes of a DaemonSet (the suite's four nodes per cluster). */
const DESIRED = 4;
const TERMINAL = ['Succeeded', 'Failed', 'Aborted', 'RolledBack'];

type SetKind = 'StatefulSet' | 'DaemonSet';

let fleet: Fleet;
let suite: FleetSuite;
let ns = '';
let suffix = '';
let names: string[] = [];
let kubes = new Map<string, Kube>();

beforeAll(async () => {
  suite = await prepareFleetSuite('sets', DESIRED);
  ({ ns, suffix, names, kubes } = suite);
  fleet = await startFleet({
    dir: mkdtempSync(path.join(os.tmpdir(), 'flotilla-rollouts-sets-')),
    env: { ...process.env, FLOTILLA_TEST_NODE_SELECTOR: `${suite.nodeLabel}=${suffix}` },
    namespace: ns,
    scopeControllers: true,
    components: 'statefulset,daemonset,hublink',
    members: suite.members(),
    rolloutTickMs: 200,
    logLevel: 'info',
  });
}, 240_000);

afterAll(async () => {
  await fleet?.stop();
  await suite?.cleanUp();
});

/** The pod template both kinds use: on the suite's nodes only. */
function template(name: string, image: string): Record<string, unknown> {
  return {
    metadata: { labels: { app: name } },
    spec: { ...suite.placement(), containers: [{ name: 'main', image }] },
  };
}

/** Every pod at once inside a cluster, so what paces each cluster is the partition alone. */
function specOf(kind: SetKind, name: string, image: string): Record<string, unknown> {
  const common = {
    selector: { matchLabels: { app: name } },
    template: template(name, image),
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '100%' } },
  };
  return kind === 'StatefulSet'
    ? { ...common, replicas: DESIRED, serviceName: name, podManagementPolicy: 'Parallel' }
    : common;
}

/** One sample of a cluster: its pods (read first), then its set. */
interface Sample {
  at: number;
  image: string | undefined;
  /** spec.updateStrategy.rollingUpdate.partition; undefined when absent. */
  partition: number | string | undefined;
  generation: number | undefined;
  observedGeneration: number | undefined;
  pods: number;
  ready: number;
  /** Pods running V2, not being deleted. */
  updated: number;
  /** Of those, the ready ones. */
  updatedReady: number;
}

interface RawSet {
  metadata?: { generation?: number };
  spec?: {
    template?: { spec?: { containers?: { image?: string }[] } };
    updateStrategy?: { rollingUpdate?: { partition?: number | string } };
  };
  status?: { observedGeneration?: number };
}

async function sample(k: Kube, kind: SetKind, name: string): Promise<Sample | undefined> {
  const pods = (await k.core.listNamespacedPod({ namespace: ns, labelSelector: `app=${name}` })).items.filter(
    (p: V1Pod) => !p.metadata?.deletionTimestamp,
  );
  let set: RawSet;
  try {
    // v1beta1: the version OpenKruise stores, with the partition where both kinds keep it.
    const { group, plural } = customResource(kind);
    set = (await k.custom.getNamespacedCustomObject({
      group,
      version: 'v1beta1',
      plural,
      namespace: ns,
      name,
    })) as RawSet;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
  const updated = pods.filter((p) => p.spec?.containers[0]?.image === V2);
  return {
    at: Date.now(),
    image: set.spec?.template?.spec?.containers?.[0]?.image,
    partition: set.spec?.updateStrategy?.rollingUpdate?.partition,
    generation: set.metadata?.generation,
    observedGeneration: set.status?.observedGeneration,
    pods: pods.length,
    ready: pods.filter(isPodReady).length,
    updated: updated.length,
    updatedReady: updated.filter(isPodReady).length,
  };
}

/** A sample without its time, to compare states. */
const stateOf = (s: Sample): string => JSON.stringify({ ...s, at: 0 });

/** Samples one workload's set in every cluster and keeps each distinct state. */
class Recorder {
  readonly samples = new Map<string, Sample[]>();
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(
    readonly kind: SetKind,
    readonly name: string,
  ) {
    for (const n of names) this.samples.set(n, []);
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await Promise.all(
        names.map(async (n) => {
          const s = await sample(kubes.get(n)!, this.kind, this.name).catch(() => undefined);
          if (!s) return;
          const list = this.samples.get(n)!;
          const last = list.at(-1);
          if (!last || stateOf(last) !== stateOf(s)) list.push(s);
        }),
      );
      await sleep(100);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

const settled = (s: Sample | undefined, image: string): boolean =>
  s !== undefined &&
  s.image === image &&
  s.observedGeneration === s.generation &&
  s.pods === DESIRED &&
  s.ready === DESIRED &&
  s.updated === (image === V2 ? DESIRED : 0);

/** How many pods (nodes) a partition keeps at the previous revision, as the controllers count it. */
function kept(partition: number | string | undefined): number {
  if (partition === undefined) return 0;
  // A StatefulSet's is a count (the hub resolves a percentage); a DaemonSet's percentage of its
  // nodes is rounded down.
  const n = typeof partition === 'number' ? partition : Math.floor((Number(partition.slice(0, -1)) * DESIRED) / 100);
  return Math.min(DESIRED, n);
}

async function createWorkload(kind: SetKind, name: string): Promise<string> {
  const created = await fleet.api<{ id: string }>('POST', '/workloads', {
    kind,
    name,
    namespace: ns,
    spec: specOf(kind, name, V1),
    placement: { clusterSelector: { matchLabels: { fleet: `sets-${suffix}` } } },
    updatePolicy: 'Rollout',
  });
  return created.id;
}

async function waitRollout(id: string, what: string, pred: (r: Rollout) => boolean, timeoutMs = 120_000) {
  return eventually(
    what,
    async () => {
      const r = await fleet.rollout(id);
      return pred(r) ? r : undefined;
    },
    timeoutMs,
    200,
  );
}

/** The rollout's story in one line, for assertion messages. */
const story = (r: Rollout): string =>
  `${r.message} | ${r.clusters.map((c) => `${c.name}: ${c.phase} (${c.message})`).join('; ')}`;

/** The partitions each cluster's set went through at V2, in order, with the spec's own values. */
function partitionsAtV2(samples: readonly Sample[]): (number | string)[] {
  const out: (number | string)[] = [];
  for (const s of samples) {
    if (s.image !== V2) continue;
    const p = s.partition === undefined || s.partition === 0 ? 'none' : s.partition;
    if (out.at(-1) !== p) out.push(p);
  }
  return out;
}

describe.concurrent('fleet rollouts of Advanced StatefulSets and DaemonSets with partition steps', () => {
  const cases: { kind: SetKind; name: string; canary: (number | string)[]; rest: (number | string)[] }[] = [
    // The hub writes a StatefulSet's partition as a count: 50% of 4 pods is 2.
    { kind: 'StatefulSet', name: 'asts', canary: [3, 2], rest: [2] },
    // A DaemonSet's partition goes as it is; the controller takes 50% of its 4 nodes.
    { kind: 'DaemonSet', name: 'ads', canary: [3, '50%'], rest: [2] },
  ];

  for (const c of cases) {
    it(`${c.kind}: each step's partition honoured in-cluster before the next, wave after wave`, async ({ expect }) => {
      const id = await createWorkload(c.kind, c.name);
      const rec = new Recorder(c.kind, c.name);
      try {
        await eventually(
          `${c.name} at ${V1} everywhere`,
          () => Promise.resolve(names.every((n) => settled(rec.samples.get(n)!.at(-1), V1))),
          90_000,
        );
        const updated = await fleet.api<{ revision: number }>('PUT', `/workloads/${id}`, {
          spec: specOf(c.kind, c.name, V2),
          placement: { clusterSelector: { matchLabels: { fleet: `sets-${suffix}` } } },
        });
        expect(updated.revision).toBe(2);
        const r0 = await startRollout(fleet, id, {
          waves: [
            {
              name: 'canary',
              clusters: { names: [names[0]] },
              canarySteps: [
                { partition: 3, pauseSeconds: 1 },
                { partition: '50%', pauseSeconds: 1 },
              ],
              soakSeconds: 1,
            },
            { name: 'rest', canarySteps: [{ partition: 2, pauseSeconds: 1 }], soakSeconds: 0 },
          ],
        });
        const final = await waitRollout(r0.id, `rollout of ${c.name} finished`, (r) => TERMINAL.includes(r.phase));
        expect(final.phase, story(final)).toBe('Succeeded');
        for (const cl of final.clusters) expect([cl.name, cl.phase]).toEqual([cl.name, 'Succeeded']);
        await eventually(
          `${c.name} at ${V2} everywhere`,
          () => Promise.resolve(names.every((n) => settled(rec.samples.get(n)!.at(-1), V2))),
          60_000,
        );
      } finally {
        await rec.stop();
      }

      const expected = new Map([
        [names[0]!, c.canary],
        [names[1]!, c.rest],
      ]);
      for (const [cluster, steps] of expected) {
        const samples = rec.samples.get(cluster)!;
        // The set's spec went through exactly the steps' partitions, then none (the full update).
        expect(partitionsAtV2(samples), cluster).toEqual([...steps, 'none']);
        // Never more pods at V2 than the partition in force let update (pods were read before
        // the spec, and a partition only ever goes down, so a sample can only err the safe way).
        for (const s of samples) {
          expect(s.updated, `${cluster} at ${JSON.stringify(s)}`).toBeLessThanOrEqual(
            DESIRED - kept(s.image === V2 ? s.partition : DESIRED),
          );
        }
        // Each step was honoured (its pods at V2 and ready, no more) before the next step's
        // partition reached the set.
        const next = [...steps.slice(1), undefined];
        steps.forEach((p, i) => {
          const honoured = samples.findIndex(
            (s) =>
              s.image === V2 &&
              s.partition === p &&
              s.pods === DESIRED &&
              s.updatedReady === DESIRED - kept(p) &&
              s.updated === DESIRED - kept(p),
          );
          const moved = samples.findIndex(
            (s) => s.image === V2 && (next[i] === undefined ? !s.partition : s.partition === next[i]),
          );
          expect(honoured, `${cluster}: step ${i + 1} (partition ${p}) never honoured`).toBeGreaterThanOrEqual(0);
          expect(honoured, `${cluster}: step ${i + 2} came before step ${i + 1} was honoured`).toBeLessThan(moved);
        });
      }
      // The rest got V2 only once the canary ran it fully, updated and ready.
      const canaryDone = rec.samples.get(names[0]!)!.find((s) => settled(s, V2))!.at;
      const restFirst = rec.samples.get(names[1]!)!.find((s) => s.image === V2)!.at;
      expect(restFirst).toBeGreaterThan(canaryDone);
    });
  }

  it('refuses canary steps for a kind without a partition, naming the wave', async ({ expect }) => {
    const created = await fleet.api<{ id: string }>('POST', '/workloads', {
      kind: 'BroadcastJob',
      name: 'bcj',
      namespace: ns,
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: V1 }] } } },
      // No cluster carries this label: the job never runs anywhere.
      placement: { clusterSelector: { matchLabels: { fleet: `none-${suffix}` } } },
      updatePolicy: 'Rollout',
    });
    const res = await fleet.call('POST', `/workloads/${created.id}/rollouts`, {
      strategy: { waves: [{ name: 'all', canarySteps: [{ partition: 1 }] }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(JSON.stringify(res.body)).toContain('strategy.waves[0].canarySteps');
    expect(JSON.stringify(res.body)).toContain('this workload is a BroadcastJob');
  });
});
