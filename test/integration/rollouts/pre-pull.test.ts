/**
 * Pre-pull of the next wave on real Postgres with the real app and scheduler and SIMULATED
 * agents (harness.ts): while the canary soaks the hub places ImagePullJobs for the new image on
 * the next wave's clusters (rollout-owned desired rows); that wave waits for "prePull" until the
 * agents report the pulls done, or at most maxWaitSeconds, then starts and the jobs are removed.
 * An aborted rollout's jobs are swept on the next tick.
 */
import { upsertStatuses } from '@flotilla/hub';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../hub/fixtures.js';
import {
  agentsReport,
  control,
  createHarness,
  eventsOf,
  getRollout,
  heartbeat,
  joinFleet,
  rolloutWorkload,
  startRollout,
  type Harness,
  type RolloutView,
} from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await createHarness('flotilla_pre_pull');
});

afterAll(async () => {
  await h?.close();
});

interface JobRow {
  cluster: string;
  name: string;
  generation: number;
  deleted: boolean;
  image: string | undefined;
}

/** The rollout's pre-pull rows (tombstones included). */
async function jobs(rolloutId: string): Promise<JobRow[]> {
  const res = await h.hub.pool.query<{
    cluster_name: string;
    name: string;
    generation: string;
    deleted: boolean;
    manifest: { spec: { image: string } } | null;
  }>(
    `select cluster_name, name, generation, deleted, manifest from desired_objects
      where workload_id = $1 and kind = 'ImagePullJob' order by cluster_name`,
    [rolloutId],
  );
  return res.rows.map((r) => ({
    cluster: r.cluster_name,
    name: r.name,
    generation: Number(r.generation),
    deleted: r.deleted,
    image: r.manifest?.spec.image,
  }));
}

/** Simulated agents report their live pre-pull jobs: pulled where `done` says so. */
async function pullsReport(rolloutId: string, done: ReadonlySet<string>): Promise<void> {
  const live = (await jobs(rolloutId)).filter((j) => !j.deleted);
  await upsertStatuses(
    h.hub.db,
    live.map((j) => ({
      reportedAtMs: h.now(),
      storedAtMs: h.now(),
      streamSequence: 0,
      message: {
        v: 1 as const,
        cluster: j.cluster,
        kind: 'ImagePullJob' as const,
        namespace: 'default',
        name: j.name,
        workloadId: rolloutId,
        revision: 2,
        generation: j.generation,
        observedGeneration: j.generation,
        counts: { replicas: 0, readyReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0, availableReplicas: 0 },
        health: done.has(j.cluster) ? ('Healthy' as const) : ('Progressing' as const),
        message: done.has(j.cluster) ? '1 of 1 nodes pulled the image' : '0 of 1 nodes pulled, 1 pulling',
        reportedAt: new Date(h.now()).toISOString(),
      },
    })),
  );
}

/** Ticks (5 s each): agents report the workload and the pulls, the scheduler steps. */
async function until(
  wid: string,
  rolloutId: string,
  pulled: ReadonlySet<string>,
  done: (r: RolloutView) => boolean,
): Promise<RolloutView> {
  for (let i = 0; i < 60; i++) {
    h.advance(5000);
    await agentsReport(h, wid, () => 'Healthy');
    await pullsReport(rolloutId, pulled);
    await h.scheduler.tick();
    const r = await getRollout(h, rolloutId);
    if (done(r)) return r;
  }
  throw new Error('the rollout did not reach the expected state');
}

const strategy = (canary: string, maxWaitSeconds: number) => ({
  waves: [
    { name: 'canary', clusters: { names: [canary] }, soakSeconds: 30 },
    { name: 'rest', soakSeconds: 0 },
  ],
  prePull: { maxWaitSeconds },
});

async function setup(prefix: string, maxWaitSeconds: number) {
  const names = await joinFleet(h, prefix, 3);
  const wid = await rolloutWorkload(h, prefix);
  // The preview shows which waves are pre-pulled and how long they wait at most.
  const dry = await call(h.app, 'POST', `/api/v1/workloads/${wid}/rollouts`, h.tokens.operator, {
    strategy: strategy(names[0]!, maxWaitSeconds),
    dryRun: true,
  });
  expect(dry.statusCode, dry.body).toBe(200);
  const previewed = dry.json<{ waves: { name: string; prePull?: { maxWaitSeconds: number } }[] }>().waves;
  expect(previewed.map((w) => w.prePull ?? null)).toEqual([null, { maxWaitSeconds }]);
  const r = await startRollout(h, wid, strategy(names[0]!, maxWaitSeconds));
  return { names, wid, id: r.id };
}

const cluster = (r: RolloutView, name: string) => r.clusters.find((c) => c.name === name)!;

describe('pre-pull of the next wave', () => {
  it('places ImagePullJobs while the canary soaks; the next wave waits until they pulled', async () => {
    const { names, wid, id } = await setup('pp', 600);
    const [c1, c2, c3] = names as [string, string, string];
    const soaking = await until(wid, id, new Set(), (r) => cluster(r, c1).phase === 'Soaking');
    expect(cluster(soaking, c2).waitingFor).toBe('previousWave');
    const rest = (soaking as RolloutView & { waves: { prePull?: { placedAt: string; endedAt: string | null } }[] })
      .waves[1]!;
    expect(rest.prePull).toMatchObject({ endedAt: null });
    const placed = await jobs(id);
    expect(placed.map((j) => [j.cluster, j.image, j.deleted])).toEqual([
      [c2, 'registry.local/app:v2', false],
      [c3, 'registry.local/app:v2', false],
    ]);

    // The canary soaked; c2 pulled, c3 still pulls: the wave waits and says for what.
    const waiting = await until(wid, id, new Set([c2]), (r) => cluster(r, c1).phase === 'Succeeded');
    expect(cluster(waiting, c2)).toMatchObject({ phase: 'Pending', waitingFor: 'prePull' });
    expect(cluster(waiting, c3).waitingUntil).not.toBeNull();
    expect(waiting.waits).toEqual({ prePull: 2 });
    expect(waiting.message).toContain(`waits for the pre-pull of its images on ${c3}`);

    const started = await until(wid, id, new Set([c2, c3]), (r) => cluster(r, c2).phase !== 'Pending');
    expect(cluster(started, c3).waitingFor).not.toBe('prePull');
    // The wave started: its jobs were removed (tombstones, the next generation).
    expect((await jobs(id)).map((j) => [j.cluster, j.generation, j.deleted])).toEqual([
      [c2, 2, true],
      [c3, 2, true],
    ]);
    const final = await until(wid, id, new Set(), (r) => r.phase === 'Succeeded');
    expect(final.phase).toBe('Succeeded');
    const said = (await eventsOf(h, id)).map((e) => e.message);
    expect(said).toContain(`pre-pull of the target revision's images placed on wave "rest"`);
    expect(said).toContain(`pre-pull of wave "rest" finished`);
  });

  it('starts the next wave after maxWaitSeconds when the pulls do not finish', async () => {
    const { names, wid, id } = await setup('ppwait', 20);
    const [c1, c2] = names as [string, string, string];
    const done = await until(wid, id, new Set(), (r) => cluster(r, c1).phase === 'Succeeded');
    const canaryDone = Date.parse(cluster(done, c1).finishedAt!);
    const started = await until(wid, id, new Set(), (r) => cluster(r, c2).phase !== 'Pending');
    expect(Date.parse(cluster(started, c2).startedAt!) - canaryDone).toBeGreaterThanOrEqual(20_000);
    expect((await jobs(id)).every((j) => j.deleted)).toBe(true);
    const said = (await eventsOf(h, id)).map((e) => e.message);
    expect(said.some((m) => m.includes('pre-pull not finished within 20s'))).toBe(true);
  });

  it('removes the jobs of an aborted rollout on the next tick', async () => {
    const { names, wid, id } = await setup('ppabort', 600);
    await until(wid, id, new Set(), (r) => cluster(r, names[0]!).phase === 'Soaking');
    expect((await jobs(id)).filter((j) => !j.deleted)).toHaveLength(2);
    const res = await control(h, id, 'abort', { reason: 'enough' });
    expect(res.statusCode, res.body).toBe(200);
    await heartbeat(h, names);
    await h.scheduler.tick();
    expect((await jobs(id)).map((j) => j.deleted)).toEqual([true, true]);
  });

  it('refuses pre-pull for a workload without a pod template, naming the field', async () => {
    const names = await joinFleet(h, 'ppside', 1);
    const created = await call(h.app, 'POST', '/api/v1/workloads', h.tokens.operator, {
      kind: 'ImagePullJob',
      name: 'ppside-pull',
      namespace: 'default',
      spec: { image: 'registry.local/app:v1' },
      placement: { clusterSelector: { matchLabels: { fleet: 'ppside' } } },
      updatePolicy: 'Rollout',
    });
    expect(created.statusCode, created.body).toBe(201);
    const res = await call(
      h.app,
      'POST',
      `/api/v1/workloads/${created.json<{ id: string }>().id}/rollouts`,
      h.tokens.operator,
      {
        strategy: { waves: [{ name: 'all', clusters: { names } }], prePull: {} },
      },
    );
    expect(res.statusCode, res.body).toBe(400);
    expect(res.body).toContain('strategy.prePull');
  });
});
