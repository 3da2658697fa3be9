/**
 * Plan preview (dryRun) on real Postgres with the real app and scheduler and SIMULATED agents
 * (harness.ts, fake clock): the preview explains every cluster of the fleet (in or out and why,
 * offline, outside its window), renders each member's manifest with its overrides and diffs it
 * against what the cluster has, gives each wave its expected start, writes nothing — and the real
 * start freezes exactly the plan it showed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutPreview } from '@flotilla/api';
import { call, cloneSetSpec } from '../hub/fixtures.js';
import {
  createHarness,
  heartbeat,
  joinFleet,
  rings,
  rolloutWorkload,
  startRollout,
  threeWaves,
  type Harness,
} from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await createHarness('flotilla_preview');
});

afterAll(async () => {
  await h?.close();
});

const HOUR = 3_600_000;

async function dryRun(wid: string, strategy: unknown) {
  return call(h.app, 'POST', `/api/v1/workloads/${wid}/rollouts`, h.tokens.operator, { strategy, dryRun: true });
}

describe('rollout preview', () => {
  it('explains the plan per cluster and wave, writes nothing, and equals what the real start freezes', async () => {
    const members = await joinFleet(h, 'prev', 5, rings);
    await joinFleet(h, 'other', 1);
    const wid = await rolloutWorkload(h, 'prev');
    // Revision 3: prev-2 runs 6 replicas (an override); the rollout goes to 3.
    const put = await call(h.app, 'PUT', `/api/v1/workloads/${wid}`, h.tokens.operator, {
      spec: cloneSetSpec(4, 'registry.local/app:v2'),
      placement: { clusterSelector: { matchLabels: { fleet: 'prev' } } },
      overrides: { 'prev-2': { replicas: 6 } },
    });
    expect(put.statusCode, put.body).toBe(200);
    // prev-5's window opens at the top of the hour after next; prev-4 goes silent.
    const opens = Math.ceil(h.now() / HOUR) * HOUR + HOUR;
    const window = { cron: `0 ${new Date(opens).getUTCHours()} * * *`, duration: '1h', timeZone: 'UTC' };
    const set = await call(h.app, 'PUT', '/api/v1/clusters/prev-5/maintenance-windows', h.tokens.operator, {
      windows: [window],
    });
    expect(set.statusCode, set.body).toBe(200);
    h.advance(60_000);
    await heartbeat(
      h,
      members.filter((m) => m !== 'prev-4'),
    );

    const strategy = threeWaves({ soakSeconds: 60 });
    const res = await dryRun(wid, strategy);
    expect(res.statusCode, res.body).toBe(200);
    const p = res.json<RolloutPreview>();
    expect(p).toMatchObject({ workloadId: wid, targetRevision: 3, previousRevision: 1, onFailure: 'Rollback' });
    expect(p.waves.map((w) => [w.name, w.members])).toEqual([
      ['canary', ['prev-1']],
      ['ring-1', ['prev-2', 'prev-3']],
      ['rest', ['prev-4', 'prev-5']],
    ]);
    const c = Object.fromEntries(p.clusters.map((x) => [x.name, x]));
    expect(c['other-1']).toMatchObject({ included: false, wave: null, manifest: null });
    expect(c['other-1']!.reasons.map((r) => r.reason)).toEqual(['selector']);
    expect(c['prev-4']!.reasons.map((r) => r.reason)).toEqual(['selector', 'offline']);
    expect(c['prev-5']!.reasons.map((r) => r.reason)).toEqual(['selector', 'window']);
    expect(c['prev-5']!.expectedStartAt).toBe(new Date(opens).toISOString());
    // The override is in prev-2's manifest; the diff is against what it runs now (revision 1).
    expect(c['prev-2']).toMatchObject({ currentRevision: 1, manifest: { spec: { replicas: 6 } } });
    expect(c['prev-2']!.diff).toEqual(
      expect.arrayContaining([
        { path: 'spec.replicas', from: 4, to: 6 },
        { path: 'spec.template.spec.containers[0].image', from: 'registry.local/app:v1', to: 'registry.local/app:v2' },
      ]),
    );
    expect(c['prev-3']!.diff.map((d) => d.path)).not.toContain('spec.replicas');
    // Expected starts: each wave after the previous one's soak.
    const start = Date.parse(p.at);
    expect(p.waves.map((w) => Date.parse(w.expectedStartAt) - start)).toEqual([0, 60_000, 120_000]);

    // Nothing was written.
    const list = await call(h.app, 'GET', `/api/v1/workloads/${wid}/rollouts`, h.tokens.viewer);
    expect(list.json<{ items: unknown[] }>().items).toEqual([]);

    // The real start freezes exactly the previewed plan.
    const r = await startRollout(h, wid, strategy);
    const stored = await h.hub.pool.query<{ plan: { waves: Record<string, unknown>[]; failureBudget: number } }>(
      'select plan from rollouts where id = $1',
      [r.id],
    );
    const frozen = stored.rows[0]!.plan;
    expect(p.waves.map(({ expectedStartAt: _s, expectedEndAt: _e, ...w }) => w)).toEqual(frozen.waves);
    expect(p.failureBudget).toBe(frozen.failureBudget);
    expect(r.targetRevision).toBe(p.targetRevision);
  });

  it('refuses what a start refuses, with the same answer', async () => {
    await joinFleet(h, 'prevbad', 3, rings);
    const wid = await rolloutWorkload(h, 'prevbad');
    const bad = { waves: [{ name: 'x', clusters: { names: ['nope'] } }] };
    const dry = await dryRun(wid, bad);
    const real = await call(h.app, 'POST', `/api/v1/workloads/${wid}/rollouts`, h.tokens.operator, { strategy: bad });
    expect(dry.statusCode).toBe(400);
    expect(dry.json()).toEqual(real.json());
    await startRollout(h, wid, { waves: [{ name: 'all' }] });
    const busy = await dryRun(wid, { waves: [{ name: 'all' }] });
    expect(busy.statusCode).toBe(409);
    const viewer = await call(h.app, 'POST', `/api/v1/workloads/${wid}/rollouts`, h.tokens.viewer, {
      strategy: { waves: [{ name: 'all' }] },
      dryRun: true,
    });
    expect(viewer.statusCode).toBe(403);
  });
});
