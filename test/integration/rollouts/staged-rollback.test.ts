/**
 * Staged rollback on real Postgres with the real app and scheduler and SIMULATED agents
 * (harness.ts, fake clock): a rollout whose strategy says `rollback: Staged` fails in its last
 * wave; the scheduler fails it and starts a rollback rollout that returns the moved clusters in
 * reverse wave order with the same soak, each cluster back at the previous revision only when its
 * wave's turn comes. An operator's rollback of such a rollout is staged too, and previewed first
 * (`dryRun`) shows exactly the plan the rollback then follows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutPreview } from '@flotilla/api';
import { call } from '../hub/fixtures.js';
import {
  createHarness,
  desired,
  eventsOf,
  joinFleet,
  rings,
  rolloutWorkload,
  run,
  startRollout,
  threeWaves,
  type Harness,
  type RolloutView,
} from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await createHarness('flotilla_staged_rollback');
});

afterAll(async () => {
  await h?.close();
});

const ms = (iso: string | null): number => (iso ? Date.parse(iso) : NaN);

describe('staged rollback', () => {
  it('returns the moved clusters in reverse wave order with the same soak', async () => {
    await joinFleet(h, 'stg', 5, rings);
    const wid = await rolloutWorkload(h, 'stg');
    const health = (cluster: string, revision: number) =>
      cluster === 'stg-4' && revision === 2 ? ('Degraded' as const) : ('Healthy' as const);
    const r0 = await startRollout(h, wid, { ...threeWaves({ soakSeconds: 30 }), rollback: 'Staged' });
    const failed = await run(h, wid, r0.id, { health });
    expect(failed.phase).toBe('Failed');
    // stg-4 failed; stg-5 took its place in the same step, then the budget stopped the rollout.
    expect(failed.message).toContain('rolling back 5 cluster(s) in stages');
    expect((await desired(h, wid)).every((r) => r.revision === 2)).toBe(true);

    const list = await call(h.app, 'GET', `/api/v1/workloads/${wid}/rollouts`, h.tokens.viewer);
    const back = list.json<{ items: RolloutView[] }>().items[0]!;
    expect(back).toMatchObject({ phase: 'Progressing', targetRevision: 1 });
    expect((back as unknown as { rollbackOf: string }).rollbackOf).toBe(r0.id);
    expect(back.waves.map((w) => [w.name, w.members])).toEqual([
      ['rest', ['stg-5', 'stg-4']],
      ['ring-1', ['stg-3', 'stg-2']],
      ['canary', ['stg-1']],
    ]);

    // Record when each cluster is sent revision 1 again.
    const returned = new Map<string, number>();
    const final = await run(h, wid, back.id, {
      health,
      onDesired: (ds) => {
        for (const d of ds) if (d.revision === 1 && !returned.has(d.cluster)) returned.set(d.cluster, h.now());
      },
    });
    expect(final.phase, final.message).toBe('Succeeded');
    // Back in reverse wave order: the rest wave first, the canary last, one wave after the other.
    const order = [...returned.keys()];
    expect(order.slice(0, 2).sort()).toEqual(['stg-4', 'stg-5']);
    expect(order.slice(2, 4).sort()).toEqual(['stg-2', 'stg-3']);
    expect(order[4]).toBe('stg-1');
    expect(returned.get('stg-1')! - returned.get('stg-2')!).toBeGreaterThanOrEqual(30_000);
    // Each wave starts after the previous one soaked 30 s.
    for (let i = 1; i < final.waves.length; i++) {
      expect(ms(final.waves[i]!.startedAt) - ms(final.waves[i - 1]!.startedAt)).toBeGreaterThanOrEqual(30_000);
    }
    expect((await desired(h, wid)).every((r) => r.revision === 1)).toBe(true);
    const pins = await h.hub.pool.query('select 1 from rollout_pins where workload_id = $1', [wid]);
    expect(pins.rowCount).toBe(0);
    expect((await eventsOf(h, back.id))[0]!.message).toContain(`staged rollback of ${r0.id} created by the scheduler`);
  });

  it('an operator previews a rollback, then rolls back exactly the previewed plan', async () => {
    await joinFleet(h, 'stp', 5, rings);
    const wid = await rolloutWorkload(h, 'stp');
    const r0 = await startRollout(h, wid, { ...threeWaves({ soakSeconds: 30 }), rollback: 'Staged' });
    const mid = await run(h, wid, r0.id, { until: (r) => r.currentWave === 'ring-1' });
    const moved = mid.clusters.filter((c) => c.phase !== 'Pending').map((c) => c.name);
    const rollback = (body?: unknown) =>
      call(h.app, 'POST', `/api/v1/rollouts/${r0.id}/rollback`, h.tokens.operator, body);

    const dry = await rollback({ dryRun: true });
    expect(dry.statusCode, dry.body).toBe(200);
    const p = dry.json<RolloutPreview>();
    expect(p.targetRevision).toBe(1);
    expect(p.waves.flatMap((w) => w.members).sort()).toEqual([...moved].sort());
    expect(p.waves.at(-1)).toMatchObject({ name: 'canary', members: ['stp-1'] });
    const untouched = p.clusters.find((c) => c.name === 'stp-5')!;
    expect(untouched.included).toBe(false);
    expect((await call(h.app, 'GET', `/api/v1/rollouts/${r0.id}`, h.tokens.viewer)).json()).toMatchObject({
      phase: 'Progressing',
    });
    expect((await rollback({ dryRun: 'yes' })).statusCode).toBe(400);

    const real = await rollback();
    expect(real.statusCode, real.body).toBe(201);
    const started = real.json<RolloutView & { rollbackOf: string }>();
    expect(started.rollbackOf).toBe(r0.id);
    expect(started.waves.map((w) => [w.name, w.members])).toEqual(p.waves.map((w) => [w.name, w.members]));
    expect((await call(h.app, 'GET', `/api/v1/rollouts/${r0.id}`, h.tokens.viewer)).json()).toMatchObject({
      phase: 'Aborted',
    });
    expect((await run(h, wid, started.id)).phase).toBe('Succeeded');
    expect((await desired(h, wid)).every((r) => r.revision === 1)).toBe(true);
  });

  it('an all-at-once rollback previews the same strategy over every cluster', async () => {
    await joinFleet(h, 'aao', 4, rings);
    const wid = await rolloutWorkload(h, 'aao');
    const r0 = await startRollout(h, wid, threeWaves({ soakSeconds: 30 }));
    await run(h, wid, r0.id, { until: (r) => r.currentWave === 'ring-1' });
    const dry = await call(h.app, 'POST', `/api/v1/rollouts/${r0.id}/rollback`, h.tokens.operator, { dryRun: true });
    expect(dry.statusCode, dry.body).toBe(200);
    const p = dry.json<RolloutPreview>();
    expect(p.targetRevision).toBe(1);
    expect(p.waves.map((w) => [w.name, w.members])).toEqual([
      ['canary', ['aao-1']],
      ['ring-1', ['aao-2', 'aao-3']],
      ['rest', ['aao-4']],
    ]);
  });
});
