/**
 * Fleet rollouts end to end: the run's first four harness clusters, each with a REAL agent
 * process (hub link + CloneSet controller) that registered itself with the hub over REST and
 * talks to it over NATS with its own credentials; two hub processes behind one address (a TCP
 * balancer, as a Service puts in front of the hub's pods) on a fresh Postgres database. What the
 * suite asserts on is what the clusters really ran, sampled by a recorder, besides what the hub
 * says. The agents' controllers watch this suite's namespace only: other suites share the clusters.
 *
 * Rings: c1 is the canary (ring 0), c2 and c3 ring 1, c4 ring 2.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DESIRED_STREAM, type Rollout, type RolloutEvent } from '@flotilla/api';
import type { NatsNode } from '@flotilla/test';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startFleet, type Fleet } from '../../fleet/fleet.js';
import {
  cloneSetReader,
  createCloneSetWorkload,
  followEvents,
  setImage,
  settledAt,
  startRollout,
  type CloneSetView,
  type CloneSetWorkload,
} from '../../fleet/workload.js';
import { clusters } from '../helpers/context.js';
import { eventually, kube } from '../helpers/kube.js';

const V1 = 'registry.local/app:v1';
const V2 = 'registry.local/app:v2';
/** kwok never makes a container with this tag ready (test/env/kwok/stages.yaml). */
const BROKEN = 'registry.local/app:v2-broken';
const REPLICAS = 2;
const TERMINAL = ['Succeeded', 'Failed', 'Aborted', 'RolledBack'];

let fleet: Fleet;
let ns = '';
let names: string[] = [];
const readers = new Map<string, (namespace: string, name: string) => Promise<CloneSetView | undefined>>();

beforeAll(async () => {
  const infos = clusters().slice(0, 4);
  if (infos.length < 4) throw new Error('the rollout e2e suite needs FLOTILLA_TEST_CLUSTERS=4 (the default)');
  const suffix = Math.random().toString(36).slice(2, 7);
  ns = `rollouts-e2e-${suffix}`;
  names = infos.map((c) => `e2e-${c.name}`);
  const t0 = performance.now();
  fleet = await startFleet({
    dir: mkdtempSync(path.join(os.tmpdir(), 'flotilla-rollouts-e2e-')),
    env: process.env,
    namespace: ns,
    scopeControllers: true,
    members: infos.map((c, i) => ({
      name: names[i]!,
      cluster: c,
      labels: { fleet: 'e2e', ring: i === 0 ? '0' : i <= 2 ? '1' : '2' },
    })),
    rolloutTickMs: 200,
    logLevel: 'info',
    hubReplicas: 2,
  });
  infos.forEach((c, i) => readers.set(names[i]!, cloneSetReader(c.kubeconfigPath)));
  console.log(`[rollouts e2e] hub and 4 agents up and accepted in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}, 240_000);

afterAll(async () => {
  await fleet?.stop();
  // The clusters outlive this suite: leave nothing behind in them.
  await Promise.all(
    clusters()
      .slice(0, 4)
      .map((c) =>
        kube(c)
          .core.deleteNamespace({ name: ns })
          .catch(() => undefined),
      ),
  );
});

/** Samples every cluster's CloneSet of one workload and keeps each distinct state with its time. */
class Recorder {
  readonly samples = new Map<string, { at: number; cs: CloneSetView | undefined }[]>();
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(readonly workload: string) {
    for (const n of names) this.samples.set(n, []);
    recorders.add(this);
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await Promise.all(
        names.map(async (n) => {
          const cs = await readers.get(n)!(ns, this.workload).catch(() => undefined);
          const list = this.samples.get(n)!;
          if (JSON.stringify(list.at(-1)?.cs) !== JSON.stringify(cs)) list.push({ at: Date.now(), cs });
        }),
      );
      await sleep(150);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    recorders.delete(this);
    await this.loop;
  }

  images(cluster: string): Set<string | undefined> {
    return new Set(this.samples.get(cluster)!.map((s) => s.cs?.image));
  }

  /** When the cluster's spec first carried `image`. */
  firstSpec(cluster: string, image: string): number {
    return this.samples.get(cluster)!.find((s) => s.cs?.image === image)?.at ?? NaN;
  }

  /** When every pod of the cluster first ran `image`, updated and ready. */
  firstSettled(cluster: string, image: string): number {
    return this.samples.get(cluster)!.find((s) => settledAt(s.cs, image, REPLICAS))?.at ?? NaN;
  }
}

/** Every recorder still sampling; a test stops its own once it has what it asserts on. */
const recorders = new Set<Recorder>();
afterAll(async () => {
  await Promise.all([...recorders].map((r) => r.stop()));
});

interface Deployed {
  id: string;
  w: CloneSetWorkload;
  rec: Recorder;
}

/** A Rollout CloneSet at V1 settled on all four clusters, then a new image (revision 2, moves nobody). */
async function deploy(name: string, next = V2): Promise<Deployed> {
  const w: CloneSetWorkload = { name, namespace: ns, replicas: REPLICAS, image: V1, selector: { fleet: 'e2e' } };
  const id = await createCloneSetWorkload(fleet, w);
  const rec = new Recorder(name);
  await eventually(`${name} at ${V1} everywhere`, async () => {
    const all = await Promise.all(names.map((n) => readers.get(n)!(ns, name)));
    return all.every((cs) => settledAt(cs, V1, REPLICAS));
  });
  const revision = await setImage(fleet, id, w, next);
  if (revision !== 2) throw new Error(`${name}: the new image made revision ${revision}, not 2`);
  return { id, w, rec };
}

async function waitRollout(id: string, what: string, pred: (r: Rollout) => boolean, timeoutMs = 90_000) {
  return eventually(
    what,
    async () => {
      const r = await fleet.rollout(id);
      return pred(r) ? r : undefined;
    },
    timeoutMs,
    150,
  );
}

const done = (id: string): Promise<Rollout> =>
  waitRollout(id, `rollout ${id} finished`, (r) => TERMINAL.includes(r.phase));
const clusterOf = (r: Rollout, name: string) => r.clusters.find((c) => c.name === name)!;
/** The rollout's story in one line, for assertion messages. */
const story = (r: Rollout): string =>
  `${r.message} | ${r.clusters.map((c) => `${c.name}: ${c.phase} (${c.message})`).join('; ')}`;
const ms = (iso: string | null): number => (iso ? Date.parse(iso) : NaN);

const threeWaves = (o: { soakSeconds?: number; approval?: string; ring1?: Record<string, unknown> } = {}) => ({
  waves: [
    { name: 'canary', clusters: { selector: { matchLabels: { ring: '0' } } }, soakSeconds: o.soakSeconds ?? 2 },
    {
      name: 'ring-1',
      clusters: { selector: { matchLabels: { ring: '1' } } },
      soakSeconds: o.soakSeconds ?? 2,
      ...(o.approval ? { approval: o.approval } : {}),
      ...o.ring1,
    },
    { name: 'rest', soakSeconds: o.soakSeconds ?? 2 },
  ],
});

// Independent workloads roll out side by side: the scenarios wait on soak times and deadlines
// far more than on the machine, so together they take about as long as the slowest one.
describe.concurrent('fleet rollouts with real agents', () => {
  it('happy path: 3 waves with soak, each wave only after the previous one is healthy, all at the new revision', async ({
    expect,
  }) => {
    const { id, rec } = await deploy('happy');
    const r0 = await startRollout(fleet, id, threeWaves());
    expect(r0.waves.map((w) => w.members)).toEqual([[names[0]], [names[1], names[2]], [names[3]]]);
    const final = await done(r0.id);
    expect(final.phase, story(final)).toBe('Succeeded');
    await eventually('every cluster at v2', async () => {
      const all = await Promise.all(names.map((n) => readers.get(n)!(ns, 'happy')));
      return all.every((cs) => settledAt(cs, V2, REPLICAS));
    });
    await rec.stop();
    // What the clusters ran: no cluster of a wave got v2 before every cluster of the previous
    // wave ran it healthy (and soaked).
    const waves = final.waves.map((w) => w.members);
    for (let i = 1; i < waves.length; i++) {
      const previousHealthy = Math.max(...waves[i - 1]!.map((c) => rec.firstSettled(c, V2)));
      for (const c of waves[i]!) expect(rec.firstSpec(c, V2)).toBeGreaterThan(previousHealthy);
    }
    // What the hub recorded: waves in order, each cluster soaked 2 s.
    for (let i = 1; i < final.waves.length; i++) {
      expect(ms(final.waves[i]!.startedAt)).toBeGreaterThanOrEqual(ms(final.waves[i - 1]!.finishedAt));
    }
    for (const c of final.clusters) {
      expect(c.phase).toBe('Succeeded');
      expect(ms(c.finishedAt) - ms(c.healthySince)).toBeGreaterThanOrEqual(2000);
    }
    const workload = await fleet.api<{ stableRevision: number }>('GET', `/workloads/${id}`);
    expect(workload.stableRevision).toBe(2);
  });

  it('failing canary: stops in wave 1, rolls the canary back, no other cluster ever sees the revision', async ({
    expect,
  }) => {
    const { id, rec } = await deploy('broken', BROKEN);
    const strategy = threeWaves();
    Object.assign(strategy.waves[0]!, { progressDeadlineSeconds: 6 });
    const r0 = await startRollout(fleet, id, strategy);
    const final = await done(r0.id);
    expect(final.phase, story(final)).toBe('RolledBack');
    expect(final.waves.map((w) => w.phase)).toEqual(['Failed', 'Pending', 'Pending']);
    expect(clusterOf(final, names[0]!).phase).toBe('RolledBack');
    await eventually('canary back at v1', async () =>
      settledAt(await readers.get(names[0]!)!(ns, 'broken'), V1, REPLICAS),
    );
    await sleep(1000);
    await rec.stop();
    expect(rec.images(names[0]!)).toEqual(new Set([V1, BROKEN]));
    for (const n of names.slice(1)) {
      expect(rec.images(n)).toEqual(new Set([V1]));
      // The spec was never changed in the cluster at all.
      expect((await readers.get(n)!(ns, 'broken'))!.generation).toBe(1);
    }
    const events = await fleet.pool.query<{ message: string }>(
      `select message from rollout_events where rollout_id = $1 order by id`,
      [r0.id],
    );
    expect(events.rows.map((e) => e.message).join('\n')).toMatch(/not healthy within 6s/);
  });

  it('approval gate blocks until approved; pause holds everything and resume continues', async ({ expect }) => {
    const { id, rec } = await deploy('gate');
    const r0 = await startRollout(
      fleet,
      id,
      threeWaves({ approval: 'Before', ring1: { maxConcurrency: 1, soakSeconds: 3 } }),
    );
    const waiting = await waitRollout(r0.id, 'waiting for approval', (r) => r.phase === 'WaitingApproval');
    expect(waiting.currentWave).toBe('ring-1');
    await sleep(2000);
    expect((await fleet.rollout(r0.id)).phase).toBe('WaitingApproval');
    for (const n of names.slice(1)) expect(rec.images(n)).toEqual(new Set([V1]));
    // Approving another wave than the one waiting is refused.
    const wrong = await fleet.call('POST', `/rollouts/${r0.id}/approve`, { wave: 'rest' });
    expect(wrong.status).toBe(409);
    await fleet.api('POST', `/rollouts/${r0.id}/approve`, { wave: 'ring-1' });

    // ring-1 runs one cluster at a time: pause while the first one is in progress.
    await waitRollout(r0.id, 'first ring-1 cluster started', (r) => clusterOf(r, names[1]!).phase !== 'Pending');
    const paused = await fleet.api<Rollout>('POST', `/rollouts/${r0.id}/pause`, { reason: 'looking at c2' });
    expect(paused.phase).toBe('Paused');
    await sleep(4000); // longer than the soak: unpaused, c3 would have started
    const held = await fleet.rollout(r0.id);
    expect(held.phase).toBe('Paused');
    expect(clusterOf(held, names[2]!).phase).toBe('Pending');
    expect(rec.images(names[2]!)).toEqual(new Set([V1]));
    expect((await fleet.call('POST', `/rollouts/${r0.id}/pause`)).status).toBe(409);

    await fleet.api('POST', `/rollouts/${r0.id}/resume`);
    const final = await done(r0.id);
    expect(final.phase, story(final)).toBe('Succeeded');
    const again = await fleet.call('POST', `/rollouts/${r0.id}/resume`);
    expect(again.status).toBe(409);
    expect(JSON.stringify(again.body)).toContain('Succeeded');
  });

  it('abort leaves every cluster where it is', async ({ expect }) => {
    const { id, rec } = await deploy('abort');
    const r0 = await startRollout(fleet, id, threeWaves({ ring1: { maxConcurrency: 1, soakSeconds: 30 } }));
    await waitRollout(r0.id, 'c2 soaking', (r) => clusterOf(r, names[1]!).phase === 'Soaking');
    const aborted = await fleet.api<Rollout>('POST', `/rollouts/${r0.id}/abort`, { reason: 'e2e' });
    expect(aborted.phase).toBe('Aborted');
    await sleep(3000);
    await rec.stop();
    const after = await Promise.all(names.map((n) => readers.get(n)!(ns, 'abort')));
    expect(after.map((cs) => cs?.image)).toEqual([V2, V2, V1, V1]);
    expect(settledAt(after[1], V2, REPLICAS)).toBe(true);
    for (const n of names.slice(2)) expect(rec.images(n)).toEqual(new Set([V1]));
    expect((await fleet.rollout(r0.id)).phase).toBe('Aborted');
  });

  it('in-cluster canary steps show as the partition of the canary cluster’s CloneSet', async ({ expect }) => {
    const { id, rec } = await deploy('steps');
    const r0 = await startRollout(fleet, id, {
      waves: [
        {
          name: 'canary',
          clusters: { names: [names[0]] },
          canarySteps: [{ partition: '50%', pauseSeconds: 2 }],
          soakSeconds: 1,
        },
        { name: 'rest', soakSeconds: 0 },
      ],
    });
    const final = await done(r0.id);
    expect(final.phase, story(final)).toBe('Succeeded');
    await eventually('canary fully updated', async () =>
      settledAt(await readers.get(names[0]!)!(ns, 'steps'), V2, REPLICAS),
    );
    await rec.stop();
    const canary = rec.samples.get(names[0]!)!.map((s) => s.cs);
    const partitions: unknown[] = [];
    for (const cs of canary) {
      const p = cs?.image === V2 ? (cs.partition ?? 'none') : undefined;
      if (p !== undefined && partitions.at(-1) !== p) partitions.push(p);
    }
    expect(partitions).toEqual(['50%', 'none']);
    // During the step, one pod of two ran the new revision, ready.
    expect(canary.some((cs) => cs?.partition === '50%' && cs.status.updatedReadyReplicas === 1)).toBe(true);
  });
});

// These disturb the whole fleet (the hub, an agent), so they run alone.
describe('fleet rollouts with real agents, disturbed', () => {
  it('two hub replicas: both serve REST and events; the leader SIGKILLed mid-wave, the other finishes it, each cluster once', async ({
    expect,
  }) => {
    const { id, rec } = await deploy('crash');
    const r0 = await startRollout(fleet, id, threeWaves({ ring1: { maxConcurrency: 1, soakSeconds: 3 } }));
    await waitRollout(r0.id, 'c2 soaking', (r) => clusterOf(r, names[1]!).phase === 'Soaking');
    const replicas = fleet.hubs();
    expect(replicas).toHaveLength(2);
    // Each replica answers REST and streams the rollout's events, whichever one leads.
    const streams = replicas.map((h) => {
      const seen: RolloutEvent[] = [];
      const ended = followEvents(fleet, r0.id, (e) => seen.push(e), undefined, h.url).catch(() => seen);
      return { h, seen, ended };
    });
    for (const h of replicas) {
      const res = await fleet.hubFetch(`${h.url}/api/v1/rollouts/${r0.id}`, {
        headers: { authorization: `Bearer ${fleet.adminToken}` },
      });
      expect(res.status).toBe(200);
    }
    await eventually('both event streams replay the history', () =>
      Promise.resolve(streams.every((s) => s.seen.some((e) => e.message === `cluster ${names[1]} started`))),
    );
    const killed = await fleet.killLeadingHub();
    const final = await done(r0.id);
    expect(final.phase, story(final)).toBe('Succeeded');
    await rec.stop();
    // The survivor's stream, opened before the kill, saw the end that the survivor itself wrote.
    const survivor = streams.find((s) => s.h !== killed)!;
    await survivor.ended;
    expect(survivor.seen.map((e) => e.message)).toContain(`cluster ${names[3]} started`);
    expect(survivor.seen.at(-1)?.phase).toBe('Succeeded');
    const starts = await fleet.pool.query<{ cluster: string }>(
      `select cluster from rollout_events where rollout_id = $1 and message like '% started' and cluster is not null`,
      [r0.id],
    );
    expect(starts.rows.map((r) => r.cluster).sort()).toEqual([...names].sort());
    // Generation 1 at creation, 2 for the target revision: each cluster was sent it once.
    const desired = await fleet.pool.query<{ cluster_name: string; revision: number; generation: string }>(
      `select cluster_name, revision, generation from desired_objects where workload_id = $1 order by cluster_name`,
      [id],
    );
    expect(desired.rows.map((r) => [r.cluster_name, r.revision, Number(r.generation)])).toEqual(
      [...names].sort().map((n) => [n, 2, 2]),
    );
    for (const n of names) expect(rec.images(n)).toEqual(new Set([V1, V2]));
  }, 240_000);

  it('an agent disconnected mid-rollout: its cluster hits the deadline, the budget absorbs it, the rest proceed', async ({
    expect,
  }) => {
    const { id, rec } = await deploy('offline');
    const r0 = await startRollout(fleet, id, threeWaves({ ring1: { failureBudget: 1, progressDeadlineSeconds: 6 } }));
    // The agent of c3 freezes (no status, no heartbeats, nothing applied) once the canary is healthy.
    const c3 = fleet.agents.get(names[2]!)!.process;
    await waitRollout(r0.id, 'canary soaking', (r) => clusterOf(r, names[0]!).phase === 'Soaking');
    process.kill(c3.pid, 'SIGSTOP');
    let final: Rollout;
    try {
      final = await done(r0.id);
      expect(rec.images(names[2]!)).toEqual(new Set([V1]));
    } finally {
      process.kill(c3.pid, 'SIGCONT');
    }
    expect(final.phase, story(final)).toBe('Succeeded');
    const off = clusterOf(final, names[2]!);
    expect(off.phase).toBe('Failed');
    expect(off.message).toMatch(/not healthy within 6s/);
    expect(final.waves[1]!.message).toContain('1 failed');
    expect(clusterOf(final, names[3]!).phase).toBe('Succeeded');
    // Back online, the agent catches up with what the hub wants (nothing is lost).
    await eventually('c3 catches up', async () =>
      settledAt(await readers.get(names[2]!)!(ns, 'offline'), V2, REPLICAS),
    );
  });

  it('a NATS node, then the desired stream leader, SIGKILLed mid-rollout: finished, each cluster once, nothing lost', async ({
    expect,
  }) => {
    const { cluster } = fleet.nats;
    const { id, rec } = await deploy('nats-kill');
    const r0 = await startRollout(fleet, id, threeWaves({ ring1: { maxConcurrency: 1, soakSeconds: 3 } }));
    await waitRollout(r0.id, 'canary soaking', (r) => clusterOf(r, names[0]!).phase === 'Soaking');
    const leader = await cluster.streamLeader(DESIRED_STREAM);
    const follower = cluster.nodes.find((n) => n !== leader)!;
    const followerDown = await killAndRestart(follower);
    await waitRollout(r0.id, 'c2 soaking', (r) => clusterOf(r, names[1]!).phase === 'Soaking');
    const leaderDown = await killAndRestart(await cluster.streamLeader(DESIRED_STREAM));
    console.log(
      `[rollouts e2e] NATS node SIGKILL: follower back and current in ${followerDown.recoveredMs} ms; ` +
        `stream leader: new leader in ${leaderDown.failoverMs} ms, node back in ${leaderDown.recoveredMs} ms`,
    );
    const final = await done(r0.id);
    expect(final.phase, story(final)).toBe('Succeeded');
    await rec.stop();
    // No cluster skipped or started twice.
    const starts = await fleet.pool.query<{ cluster: string }>(
      `select cluster from rollout_events where rollout_id = $1 and message like '% started' and cluster is not null`,
      [r0.id],
    );
    expect(starts.rows.map((r) => r.cluster).sort()).toEqual([...names].sort());
    // Every acknowledged desired state reached its cluster, every status the hub needed arrived.
    for (const n of names) expect(rec.images(n)).toEqual(new Set([V1, V2]));
    const sent = await fleet.pool.query<{ unsent: string }>(
      `select count(*) as unsent from outbox where sent_at is null and subject like '%.nats-kill'`,
    );
    expect(Number(sent.rows[0]!.unsent)).toBe(0);
    for (const c of final.clusters) expect([c.name, c.phase]).toEqual([c.name, 'Succeeded']);
  });

  it('all of NATS frozen for 60 s: agents keep reconciling locally, a rollout started meanwhile finishes after', async ({
    expect,
  }) => {
    const { cluster } = fleet.nats;
    const name = 'nats-freeze';
    const w: CloneSetWorkload = { name, namespace: ns, replicas: REPLICAS, image: V1, selector: { fleet: 'e2e' } };
    const id = await createCloneSetWorkload(fleet, w);
    await eventually(`${name} at ${V1} everywhere`, async () => {
      const all = await Promise.all(names.map((n) => readers.get(n)!(ns, name)));
      return all.every((cs) => settledAt(cs, V1, REPLICAS));
    });
    const k = kube(clusters()[0]!);
    const pods = async (): Promise<{ name: string; ready: boolean }[]> =>
      (await k.core.listNamespacedPod({ namespace: ns })).items
        .filter((p) => p.metadata?.name?.startsWith(`${name}-`) && !p.metadata.deletionTimestamp)
        .map((p) => ({
          name: p.metadata!.name!,
          ready: (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
        }));
    const frozenAt = Date.now();
    cluster.pause();
    try {
      // The REST API still acknowledges: the new revision and a rollout wait in Postgres.
      expect(await setImage(fleet, id, w, V2)).toBe(2);
      const r0 = await startRollout(fleet, id, threeWaves({ soakSeconds: 1 }));
      // The agent in c1 repairs its cluster on its own: a deleted pod comes back.
      const gone = (await pods())[0]!.name;
      await k.core.deleteNamespacedPod({ name: gone, namespace: ns, gracePeriodSeconds: 0 });
      await eventually(
        'c1 recreates the deleted pod while NATS is frozen',
        async () => {
          const now = await pods();
          return now.length === REPLICAS && now.every((p) => p.ready && p.name !== gone);
        },
        45_000,
      );
      expect(Date.now() - frozenAt).toBeLessThan(60_000);
      await sleep(Math.max(0, 60_000 - (Date.now() - frozenAt)));
      // Frozen, nothing reached a cluster: the canary may have been started (before the hub noticed
      // it could not hear NATS) but waits; no later wave started; every cluster still runs v1.
      const during = await fleet.rollout(r0.id);
      expect(
        during.waves.slice(1).map((wave) => wave.phase),
        story(during),
      ).toEqual(['Pending', 'Pending']);
      for (const n of names) expect((await readers.get(n)!(ns, name))?.image).toBe(V1);
      cluster.resume();
      const final = await done(r0.id);
      expect(final.phase, story(final)).toBe('Succeeded');
      await eventually('every cluster at v2 after the thaw', async () => {
        const all = await Promise.all(names.map((n) => readers.get(n)!(ns, name)));
        return all.every((cs) => settledAt(cs, V2, REPLICAS));
      });
    } finally {
      cluster.resume();
    }
  }, 240_000);
});

/**
 * SIGKILLs a NATS node, waits until the desired stream has a leader on a live node, starts the
 * node again on its ports and store and waits until every node reports JetStream current.
 */
async function killAndRestart(node: NatsNode): Promise<{ failoverMs: number; recoveredMs: number }> {
  const { cluster } = fleet.nats;
  const killedAt = Date.now();
  await node.kill();
  await eventually('the desired stream has a leader on a live node', async () => {
    const leader = await cluster.streamLeader(DESIRED_STREAM).catch(() => undefined);
    return leader !== undefined && leader !== node;
  });
  const failoverMs = Date.now() - killedAt;
  await node.start();
  await cluster.waitHealthy(60_000);
  return { failoverMs, recoveredMs: Date.now() - killedAt };
}
