/**
 * A fleet rollout of a BroadcastJob's new template, end to end: the run's first two harness
 * clusters, each with a REAL agent process (hub link + BroadcastJob controller, scoped to this
 * suite's namespace), the hub as its own process on a fresh Postgres database and a NATS cluster.
 *
 * Revision 1 runs to completion everywhere. Revision 2 changes the template; a rollout moves it in
 * two waves (c1, then c2). A recorder samples what the clusters really run (the job, then its
 * pods), and the assertions are about those samples: each cluster's job was replaced (a new uid),
 * the new job's pods ran the new image on every node and completed, the old pods went, and c2
 * got revision 2 only once c1's new job had completed — the old run never passed for the new one.
 *
 * Each job runs on two kwok nodes of this suite's own per cluster (labelled and tainted); its
 * pods end Succeeded through the kwok stage flotilla-pod-exit (the exit-code label).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Rollout } from '@flotilla/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet } from '../../fleet/fleet.js';
import { startRollout } from '../../fleet/workload.js';
import { customResource, eventually, type Kube } from '../helpers/kube.js';
import { prepareFleetSuite, startBroadcastJobFleet, type FleetSuite } from './fleet-suite.js';

const V1 = 'registry.local/task:v1';
const V2 = 'registry.local/task:v2';
const NODES = 2;
const EXIT_CODE_LABEL = 'flotilla.test/exit-code';
const TERMINAL = ['Succeeded', 'Failed', 'Aborted', 'RolledBack'];
const JOB = 'node-task';

let fleet: Fleet;
let suite: FleetSuite;

beforeAll(async () => {
  suite = await prepareFleetSuite('bcj', NODES);
  fleet = await startBroadcastJobFleet(suite, 'bcj');
}, 240_000);

afterAll(async () => {
  await fleet?.stop();
  await suite?.cleanUp();
});

/** One pod per suite node, ending Succeeded shortly after it runs. */
function specOf(image: string): Record<string, unknown> {
  return {
    template: {
      metadata: { labels: { app: JOB, [EXIT_CODE_LABEL]: '0' } },
      spec: { restartPolicy: 'Never', ...suite.placement(), containers: [{ name: 'main', image }] },
    },
  };
}

/** One sample of a cluster: its job (read first), then the pods. */
interface Sample {
  at: number;
  /** Which pass of the recorder took it; within a pass c1 is read before c2. */
  pass: number;
  uid: string | undefined;
  image: string | undefined;
  phase: string | undefined;
  /** The job's pods (this uid's) by image and phase, e.g. "v2:Succeeded". */
  pods: string[];
  /** Pods of other (earlier) jobs still present. */
  others: number;
}

interface RawJob {
  metadata?: { uid?: string };
  spec?: { template?: { spec?: { containers?: { image?: string }[] } } };
  status?: { phase?: string };
}

async function sample(k: Kube, pass: number): Promise<Sample | undefined> {
  let job: RawJob;
  try {
    const { group, version, plural } = customResource('BroadcastJob');
    const namespace = suite.ns;
    job = (await k.custom.getNamespacedCustomObject({ group, version, plural, namespace, name: JOB })) as RawJob;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
  const uid = job.metadata?.uid;
  const pods = (await k.core.listNamespacedPod({ namespace: suite.ns, labelSelector: `app=${JOB}` })).items;
  const own = pods.filter((p) => p.metadata?.labels?.['broadcastjob-controller-uid'] === uid);
  return {
    at: Date.now(),
    pass,
    uid,
    image: job.spec?.template?.spec?.containers?.[0]?.image,
    phase: job.status?.phase,
    pods: own.map((p) => `${p.spec?.containers[0]?.image?.split(':').at(-1)}:${p.status?.phase}`).sort(),
    others: pods.length - own.length,
  };
}

const stateOf = (s: Sample): string => JSON.stringify({ ...s, at: 0, pass: 0 });

/** Samples the job in every cluster (in `suite.names` order) and keeps each distinct state. */
class Recorder {
  readonly samples = new Map<string, Sample[]>();
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor() {
    for (const n of suite.names) this.samples.set(n, []);
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    for (let pass = 0; !this.stopped; pass++) {
      for (const n of suite.names) {
        const s = await sample(suite.kubes.get(n)!, pass).catch(() => undefined);
        if (!s) continue;
        const list = this.samples.get(n)!;
        const last = list.at(-1);
        if (!last || stateOf(last) !== stateOf(s)) list.push(s);
      }
      await sleep(100);
    }
  }

  last(name: string): Sample | undefined {
    return this.samples.get(name)!.at(-1);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

const ALL_SUCCEEDED = (tag: string): string[] => Array.from({ length: NODES }, () => `${tag}:Succeeded`);

/** The job at `image` ran to completion: one Succeeded pod per node, nothing else left. */
const completedAt = (s: Sample | undefined, image: string): boolean =>
  s !== undefined &&
  s.image === image &&
  s.phase === 'completed' &&
  JSON.stringify(s.pods) === JSON.stringify(ALL_SUCCEEDED(image.split(':').at(-1)!)) &&
  s.others === 0;

const story = (r: Rollout): string =>
  `${r.message} | ${r.clusters.map((c) => `${c.name}: ${c.phase} (${c.message})`).join('; ')}`;

describe('fleet rollout of a BroadcastJob template', () => {
  it('replaces each wave’s job, runs the new template on every node, and gates the wave on it', async () => {
    const rec = new Recorder();
    const placement = suite.clusterPlacement();
    const names = suite.names;
    try {
      const created = await fleet.api<{ id: string }>('POST', '/workloads', {
        kind: 'BroadcastJob',
        name: JOB,
        namespace: suite.ns,
        spec: specOf(V1),
        placement,
        updatePolicy: 'Rollout',
      });
      await eventually(
        'revision 1 completed everywhere',
        () => Promise.resolve(names.every((n) => completedAt(rec.last(n), V1))),
        90_000,
      );
      const firstUids = new Map(names.map((n) => [n, rec.last(n)!.uid]));

      const updated = await fleet.api<{ revision: number }>('PUT', `/workloads/${created.id}`, {
        spec: specOf(V2),
        placement,
      });
      expect(updated.revision).toBe(2);
      const started = await startRollout(fleet, created.id, {
        waves: [
          { name: 'canary', clusters: { names: [names[0]] }, soakSeconds: 0 },
          { name: 'rest', soakSeconds: 0 },
        ],
      });
      const final = await eventually(
        'the rollout finished',
        async () => {
          const r = await fleet.rollout(started.id);
          return TERMINAL.includes(r.phase) ? r : undefined;
        },
        120_000,
        200,
      );
      expect(final.phase, story(final)).toBe('Succeeded');
      for (const c of final.clusters) expect([c.name, c.phase]).toEqual([c.name, 'Succeeded']);
      await eventually(
        'revision 2 completed everywhere',
        () => Promise.resolve(names.every((n) => completedAt(rec.last(n), V2))),
        30_000,
      );

      for (const n of names) {
        const samples = rec.samples.get(n)!;
        const last = samples.at(-1)!;
        // A new job (not the old one patched), whose own pods ran the new image on every node.
        expect(last.uid, n).not.toBe(firstUids.get(n));
        expect(last.pods, n).toEqual(ALL_SUCCEEDED('v2'));
        // The old job's object never carried the new template: it was replaced, not patched.
        const patched = samples.find((s) => s.uid === firstUids.get(n) && s.image === V2);
        expect(patched, n).toBeUndefined();
      }
      // c2 got revision 2 only after c1's new job had completed (c1 is read first in each pass).
      const canaryDone = rec.samples.get(names[0]!)!.find((s) => completedAt(s, V2))!;
      const restFirst = rec.samples.get(names[1]!)!.find((s) => s.image === V2)!;
      expect(restFirst.pass, JSON.stringify({ canaryDone, restFirst })).toBeGreaterThanOrEqual(canaryDone.pass);
      // While c1's new job ran, c2 kept its completed revision-1 job.
      const canaryNew = rec.samples.get(names[0]!)!.find((s) => s.image === V2)!;
      expect(restFirst.pass).toBeGreaterThan(canaryNew.pass);
    } finally {
      await rec.stop();
    }
  });
});
