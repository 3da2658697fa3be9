/**
 * Maintenance windows on real Postgres with the real app and scheduler and SIMULATED agents
 * (harness.ts, fake clock): windows are set over REST and refused naming the field when bad; a
 * cluster outside its window waits (reason `window`, the next opening shown) while the others
 * of its wave proceed, and starts once its window opens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../hub/fixtures.js';
import {
  createHarness,
  desired,
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

beforeAll(async () => {
  h = await createHarness('flotilla_windows');
});

afterAll(async () => {
  await h?.close();
});

const HOUR = 3_600_000;

async function setWindows(cluster: string, windows: unknown) {
  return call(h.app, 'PUT', `/api/v1/clusters/${cluster}/maintenance-windows`, h.tokens.operator, { windows });
}

describe('maintenance windows', () => {
  it('are set over REST, and refused naming the field when the cron, duration or zone is bad', async () => {
    const [c] = await joinFleet(h, 'winrest', 1);
    const bad = await setWindows(c!, [
      { cron: '0 2 * * SAT', duration: '4h', timeZone: 'Europe/Berlin' },
      { cron: '0 25 * * *', duration: '4 hours', timeZone: 'Mars/Base' },
    ]);
    expect(bad.statusCode, bad.body).toBe(400);
    const details = bad.json<{ error: { details: { path: string; message: string }[] } }>().error.details;
    expect(details.map((d) => d.path)).toEqual(['windows[1].cron', 'windows[1].duration', 'windows[1].timeZone']);
    expect(details[0]!.message).toContain('hour: 25 is outside 0-23');
    const missing = await setWindows(c!, [{ cron: '0 2 * * *', duration: '1h' }]);
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toContain('timeZone');

    const window = { cron: '0 2 * * SAT', duration: '4h', timeZone: 'Europe/Berlin' };
    const ok = await setWindows(c!, [window]);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ name: c, maintenanceWindows: [window] });
    const got = await call(h.app, 'GET', `/api/v1/clusters/${c}`, h.tokens.viewer);
    expect(got.json()).toMatchObject({ maintenanceWindows: [window] });
    const viewer = await call(h.app, 'PUT', `/api/v1/clusters/${c}/maintenance-windows`, h.tokens.viewer, {
      windows: [],
    });
    expect(viewer.statusCode).toBe(403);
    expect((await setWindows('winrest-nope', [])).statusCode).toBe(404);
  });

  it('keep one cluster waiting while the others proceed; it starts once its window opens', async () => {
    const clusters = await joinFleet(h, 'win', 3);
    // win-2's window opens at the top of the hour after next (UTC) and stays open 1 h.
    const opens = Math.ceil(h.now() / HOUR) * HOUR + HOUR;
    const hour = new Date(opens).getUTCHours();
    expect((await setWindows('win-2', [{ cron: `0 ${hour} * * *`, duration: '1h', timeZone: 'UTC' }])).statusCode).toBe(
      200,
    );
    const wid = await rolloutWorkload(h, 'win');
    const r0 = await startRollout(h, wid, { waves: [{ name: 'all', soakSeconds: 30 }] });
    const waiting = await run(h, wid, r0.id, {
      until: (r) => r.clusters.filter((c) => c.phase === 'Succeeded').length === 2,
    });
    const byName = Object.fromEntries(waiting.clusters.map((c) => [c.name, c]));
    expect(byName['win-1']!.phase).toBe('Succeeded');
    expect(byName['win-3']!.phase).toBe('Succeeded');
    expect(byName['win-2']).toMatchObject({
      phase: 'Pending',
      waitingFor: 'window',
      waitingUntil: new Date(opens).toISOString(),
      runningRevision: 1,
    });
    expect(waiting.phase).toBe('Progressing');
    expect(waiting.waits).toEqual({ window: 1 });
    expect(waiting.skew).toBe(true);

    // Still waiting a minute before the opening; started once it opened.
    h.advance(opens - 60_000 - h.now());
    const before = await run(h, wid, r0.id, { stepMs: 1000, until: () => true });
    expect(before.clusters.find((c) => c.name === 'win-2')!.phase).toBe('Pending');
    const final = await run(h, wid, r0.id, { stepMs: 30_000 });
    expect(final.phase, final.message).toBe('Succeeded');
    const started = Date.parse(final.clusters.find((c) => c.name === 'win-2')!.startedAt!);
    expect(started).toBeGreaterThanOrEqual(opens);
    expect(started).toBeLessThan(opens + HOUR);
    expect(clusters).toHaveLength(3);
    expect((await getRollout(h, r0.id)).skew).toBe(false);
  });

  it('hold a cluster of a later wave too: the step that starts its wave sees the window', async () => {
    await joinFleet(h, 'winlate', 4, rings);
    expect(
      (await setWindows('winlate-3', [{ cron: '0 3 29 2 *', duration: '1h', timeZone: 'Europe/Berlin' }])).statusCode,
    ).toBe(200);
    const wid = await rolloutWorkload(h, 'winlate');
    const r0 = await startRollout(h, wid, threeWaves({ soakSeconds: 2 }));
    const r = await run(h, wid, r0.id, {
      until: (x) => x.clusters.find((c) => c.name === 'winlate-2')?.phase === 'Succeeded',
    });
    expect(r.clusters.find((c) => c.name === 'winlate-3')).toMatchObject({ phase: 'Pending', waitingFor: 'window' });
    expect(r.currentWave).toBe('ring-1');
    expect((await desired(h, wid)).find((d) => d.cluster === 'winlate-3')!.revision).toBe(1);
  });
});
