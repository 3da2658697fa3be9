/**
 * "Why is it stuck" and revision skew, on real Postgres with the real app and scheduler and
 * SIMULATED agents (harness.ts): mid-rollout every waiting cluster names what it waits for, the
 * status shows which revision each cluster runs and flags the skew, and the scheduler's gauge
 * counts the waits by reason; at the end nothing waits and nothing is skewed.
 */
import { createHubMetrics, type HubMetrics } from '@flotilla/hub';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createHarness,
  getRollout,
  joinFleet,
  rings,
  rolloutWorkload,
  run,
  startRollout,
  threeWaves,
  type Harness,
} from './harness.js';

let h: Harness;
let metrics: HubMetrics;

beforeAll(async () => {
  metrics = createHubMetrics(new Registry(), false);
  h = await createHarness('flotilla_why_stuck', { metrics });
});

afterAll(async () => {
  await h?.close();
});

async function gauge(): Promise<Record<string, number>> {
  const values = (await metrics.rolloutWaits.get()).values;
  return Object.fromEntries(values.filter((v) => v.value > 0).map((v) => [String(v.labels.reason), v.value]));
}

describe('why is it stuck', () => {
  it('names each wait, shows running revisions and skew mid-rollout, and none at the end', async () => {
    await joinFleet(h, 'stuck', 5, rings);
    const wid = await rolloutWorkload(h, 'stuck');
    const r0 = await startRollout(h, wid, threeWaves({ soakSeconds: 30 }));
    expect(r0.skew).toBe(false);
    const mid = await run(h, wid, r0.id, {
      until: (r) => r.clusters.find((c) => c.name === 'stuck-1')?.phase === 'Soaking',
    });
    const byName = Object.fromEntries(mid.clusters.map((c) => [c.name, c]));
    expect(byName['stuck-1']).toMatchObject({ waitingFor: 'soak', desiredRevision: 2, runningRevision: 2 });
    for (const n of ['stuck-2', 'stuck-3', 'stuck-4', 'stuck-5']) {
      expect(byName[n]).toMatchObject({ waitingFor: 'previousWave', desiredRevision: 1, runningRevision: 1 });
    }
    expect(mid.waits).toEqual({ soak: 1, previousWave: 4 });
    expect(mid.skew).toBe(true);
    expect(mid.revisions).toEqual([
      { revision: 1, clusters: 4 },
      { revision: 2, clusters: 1 },
    ]);
    // The scheduler's gauge counted the same waits at its last tick.
    expect(await gauge()).toEqual({ soak: 1, previousWave: 4 });

    // ring-1 runs one cluster at a time: the other waits for concurrency.
    const h2 = await run(h, wid, r0.id, {
      until: (r) => r.clusters.some((c) => c.wave === 'rest' && c.phase !== 'Pending'),
    });
    const rest = h2.clusters.filter((c) => c.wave === 'rest');
    expect(rest.map((c) => c.waitingFor).sort()).toEqual(['concurrency', 'health']);

    const final = await run(h, wid, r0.id);
    expect(final.phase, final.message).toBe('Succeeded');
    expect(final.waits).toEqual({});
    expect(final.clusters.every((c) => c.waitingFor === null && c.runningRevision === 2)).toBe(true);
    expect(final.skew).toBe(false);
    expect(final.revisions).toEqual([{ revision: 2, clusters: 5 }]);
    await h.scheduler.tick();
    expect(await gauge()).toEqual({});
    expect((await getRollout(h, r0.id)).skew).toBe(false);
  });
});
