/**
 * Fleet rollouts end to end inside the hub: real Postgres, the hub app through inject(), the real
 * scheduler; agents are SIMULATED (see harness.ts) — they report status for exactly what the hub
 * put in desired_objects, so the scheduler sees what real agents would report.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../hub/fixtures.js';
import {
  agentsReport,
  control,
  createHarness,
  desired,
  eventsOf,
  getRollout,
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
  h = await createHarness('flotilla_rollouts');
});

afterAll(async () => {
  await h?.close();
});

const ms = (iso: string | null): number => (iso ? Date.parse(iso) : NaN);
const started = (r: RolloutView): string[] => r.clusters.filter((c) => c.phase !== 'Pending').map((c) => c.name);

describe('rollouts', () => {
  it('happy path: 3 waves with soak, in order, every cluster ends at the target revision', async () => {
    const clusters = await joinFleet(h, 'happy', 5, rings);
    const wid = await rolloutWorkload(h, 'happy');
    const r0 = await startRollout(h, wid, threeWaves({ soakSeconds: 30 }));
    expect(r0).toMatchObject({ phase: 'Progressing', targetRevision: 2, previousRevision: 1 });
    const final = await run(h, wid, r0.id);
    expect(final.phase, final.message).toBe('Succeeded');
    // Waves never overlap: each wave starts after the previous one finished.
    for (let i = 1; i < final.waves.length; i++) {
      expect(ms(final.waves[i]!.startedAt)).toBeGreaterThanOrEqual(ms(final.waves[i - 1]!.finishedAt));
      for (const c of final.clusters.filter((x) => x.wave === final.waves[i]!.name)) {
        expect(ms(c.startedAt)).toBeGreaterThanOrEqual(ms(final.waves[i - 1]!.finishedAt));
      }
    }
    // Soak: each cluster stayed healthy at least 30 s before it succeeded.
    for (const c of final.clusters) {
      expect(c.phase).toBe('Succeeded');
      expect(ms(c.finishedAt) - ms(c.healthySince)).toBeGreaterThanOrEqual(30_000);
    }
    // maxConcurrency 1 in the last wave: its clusters ran one after the other.
    const rest = final.clusters.filter((c) => c.wave === 'rest');
    expect(ms(rest[1]!.startedAt)).toBeGreaterThanOrEqual(ms(rest[0]!.finishedAt));
    const rows = await desired(h, wid);
    expect(rows.map((r) => [r.cluster, r.revision])).toEqual(clusters.map((c) => [c, 2]));
    const w = await call(h.app, 'GET', `/api/v1/workloads/${wid}`, h.tokens.viewer);
    expect(w.json()).toMatchObject({ stableRevision: 2, revision: 2 });
    const pins = await h.hub.pool.query('select 1 from rollout_pins where workload_id = $1', [wid]);
    expect(pins.rowCount).toBe(0);

    // History as server-sent events (finished rollout: history, then the stream ends).
    const sse = await h.app.inject({
      method: 'GET',
      url: `/api/v1/rollouts/${r0.id}/events`,
      headers: { authorization: `Bearer ${h.tokens.viewer}` },
    });
    expect(sse.statusCode).toBe(200);
    expect(sse.headers['content-type']).toContain('text/event-stream');
    const events = sse.body
      .split('\n\n')
      .filter((b) => b.startsWith('id: '))
      .map(
        (b) =>
          JSON.parse(
            b
              .split('\n')
              .find((l) => l.startsWith('data: '))!
              .slice(6),
          ) as { message: string },
      );
    expect(events[0]!.message).toContain('rollout created');
    expect(events.at(-1)!.message).toContain('rollout succeeded');

    // Rollback: a new rollout back to revision 1 with the same strategy.
    const rb = await call(h.app, 'POST', `/api/v1/rollouts/${r0.id}/rollback`, h.tokens.operator);
    expect(rb.statusCode, rb.body).toBe(201);
    const back = rb.json<RolloutView>();
    expect(back).toMatchObject({ targetRevision: 1, previousRevision: 2, rollbackOf: r0.id });
    expect((await run(h, wid, back.id)).phase).toBe('Succeeded');
    expect((await desired(h, wid)).every((r) => r.revision === 1)).toBe(true);
    const list = await call(h.app, 'GET', `/api/v1/workloads/${wid}/rollouts`, h.tokens.viewer);
    expect(list.json<{ items: { id: string }[] }>().items.map((i) => i.id)).toEqual([back.id, r0.id]);
  });

  it('failing canary: stops in wave 1, rolls the canary back, nobody else ever gets the revision', async () => {
    const clusters = await joinFleet(h, 'bad', 5, rings);
    const wid = await rolloutWorkload(h, 'bad');
    const r0 = await startRollout(h, wid, threeWaves());
    const ever = new Map<string, Set<number>>();
    const final = await run(h, wid, r0.id, {
      health: (_c, rev) => (rev === 2 ? 'Degraded' : 'Healthy'),
      onDesired: (rows) => {
        for (const r of rows) ever.set(r.cluster, (ever.get(r.cluster) ?? new Set()).add(r.revision));
      },
    });
    expect(final.phase).toBe('RolledBack');
    expect(final.waves.map((w) => w.phase)).toEqual(['Failed', 'Pending', 'Pending']);
    expect(final.clusters.find((c) => c.name === 'bad-1')!.phase).toBe('RolledBack');
    expect(ever.get('bad-1')).toEqual(new Set([1, 2]));
    for (const c of clusters.slice(1)) expect(ever.get(c)).toEqual(new Set([1]));
    expect((await desired(h, wid)).every((r) => r.revision === 1)).toBe(true);
  });

  it('approval gate blocks a wave until approved; approve in the wrong state is a 409', async () => {
    await joinFleet(h, 'gate', 5, rings);
    const wid = await rolloutWorkload(h, 'gate');
    const r0 = await startRollout(h, wid, threeWaves({ approval: 'Before', soakSeconds: 0 }));
    const early = await control(h, r0.id, 'approve');
    expect(early.statusCode).toBe(409);
    expect(early.json().error.message).toContain('Progressing');
    const waiting = await run(h, wid, r0.id, { until: (r) => r.phase === 'WaitingApproval' });
    expect(waiting.currentWave).toBe('ring-1');
    // Time passes; nothing moves while the gate is closed.
    const held = await run(h, wid, r0.id, { maxSteps: 5, until: (r) => r.phase !== 'WaitingApproval' }).catch(
      () => undefined,
    );
    expect(held).toBeUndefined();
    expect(started(await getRollout(h, r0.id))).toEqual(['gate-1']);
    expect((await desired(h, wid)).filter((r) => r.revision === 2).map((r) => r.cluster)).toEqual(['gate-1']);
    const ok = await control(h, r0.id, 'approve', { wave: 'ring-1' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await run(h, wid, r0.id)).phase).toBe('Succeeded');
  });

  it('pause holds everything, resume continues; resuming a finished rollout is a 409 with its phase', async () => {
    await joinFleet(h, 'pause', 5, rings);
    const wid = await rolloutWorkload(h, 'pause');
    const r0 = await startRollout(h, wid, threeWaves({ soakSeconds: 20 }));
    await run(h, wid, r0.id, { until: (r) => r.currentWave === 'ring-1' });
    const p = await control(h, r0.id, 'pause', { reason: 'investigating' });
    expect(p.statusCode, p.body).toBe(200);
    expect(p.json()).toMatchObject({ phase: 'Paused' });
    const before = await desired(h, wid);
    const snapshot = await getRollout(h, r0.id);
    for (let i = 0; i < 5; i++) {
      h.advance(60_000);
      expect((await h.scheduler.tick()).filter((o) => o.rolloutId === r0.id)).toEqual([]);
    }
    expect(await desired(h, wid)).toEqual(before);
    expect((await getRollout(h, r0.id)).clusters).toEqual(snapshot.clusters);
    expect((await control(h, r0.id, 'pause')).statusCode).toBe(409);
    expect((await control(h, r0.id, 'resume')).statusCode).toBe(200);
    expect((await run(h, wid, r0.id)).phase).toBe('Succeeded');
    const again = await control(h, r0.id, 'resume');
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatchObject({
      code: 'HUB_ERR_CONFLICT',
      details: [{ path: 'phase', message: 'Succeeded' }],
    });
    expect(again.json().error.message).toContain('Succeeded');
    const audit = await h.hub.pool.query<{ action: string }>(
      `select action from audit_log where target_id = $1 order by id`,
      [r0.id],
    );
    expect(audit.rows.map((a) => a.action)).toEqual(['rollout.create', 'rollout.pause', 'rollout.resume']);
  });

  it('abort leaves clusters where they are', async () => {
    await joinFleet(h, 'abort', 5, rings);
    const wid = await rolloutWorkload(h, 'abort');
    const r0 = await startRollout(h, wid, threeWaves());
    await run(h, wid, r0.id, { until: (r) => r.currentWave === 'ring-1' });
    const a = await control(h, r0.id, 'abort');
    expect(a.statusCode, a.body).toBe(200);
    expect(a.json()).toMatchObject({ phase: 'Aborted' });
    const before = await desired(h, wid);
    expect(before.filter((r) => r.revision === 2).map((r) => r.cluster)).toEqual(['abort-1', 'abort-2', 'abort-3']);
    h.advance(120_000);
    await h.scheduler.tick();
    expect(await desired(h, wid)).toEqual(before);
    expect((await control(h, r0.id, 'abort')).statusCode).toBe(409);
    // The workload is free for a new rollout.
    const next = await startRollout(h, wid, threeWaves({ soakSeconds: 0 }));
    expect((await run(h, wid, next.id)).phase).toBe('Succeeded');
  });

  it('a scheduler restarted mid-wave neither repeats nor skips a cluster', async () => {
    const clusters = await joinFleet(h, 'restart', 5, rings);
    const wid = await rolloutWorkload(h, 'restart');
    const r0 = await startRollout(h, wid, threeWaves({ soakSeconds: 20 }));
    await run(h, wid, r0.id, { until: (r) => r.currentWave === 'ring-1' && started(r).length === 3 });
    await h.scheduler.stop();
    expect(h.scheduler.isLeader()).toBe(false);
    h.scheduler = h.newScheduler();
    const final = await run(h, wid, r0.id);
    expect(final.phase).toBe('Succeeded');
    const starts = (await eventsOf(h, r0.id)).filter((e) => e.message.endsWith(' started') && e.cluster);
    expect(starts.map((e) => e.cluster).sort()).toEqual([...clusters].sort());
    // Generation 1 at creation, 2 for the target revision: each cluster was sent it exactly once.
    expect((await desired(h, wid)).map((r) => [r.revision, r.generation])).toEqual(clusters.map(() => [2, 2]));
  });

  it('a tick steps only rollouts that change; new wording alone is written at most every 3 s', async () => {
    await joinFleet(h, 'quiet', 5, rings);
    const wid = await rolloutWorkload(h, 'quiet');
    const r0 = await startRollout(h, wid, threeWaves());
    const mine = async () => (await h.scheduler.tick()).find((o) => o.rolloutId === r0.id)!;
    expect(await mine()).toMatchObject({ changed: true, desiredChanged: 1 }); // the canary starts
    // No report yet: the only news is the canary's message ("no status"), not yet worth a write.
    h.advance(1000);
    expect(await mine()).toMatchObject({ changed: false });
    expect((await getRollout(h, r0.id)).clusters[0]!.message).toBe('updating');
    h.advance(3000);
    expect(await mine()).toMatchObject({ changed: true, desiredChanged: 0 });
    expect((await getRollout(h, r0.id)).clusters[0]!.message).toContain('NoStatus');
    // A real transition is stepped at once: the canary reports healthy and starts soaking.
    h.advance(100);
    await agentsReport(h, wid, () => 'Healthy');
    expect(await mine()).toMatchObject({ changed: true });
    expect((await getRollout(h, r0.id)).clusters[0]!.phase).toBe('Soaking');
    await control(h, r0.id, 'abort');
  });

  it('only one scheduler leads among replicas', async () => {
    const other = h.newScheduler();
    await h.scheduler.tick();
    expect(h.scheduler.isLeader()).toBe(true);
    expect(await other.tick()).toEqual([]);
    expect(other.isLeader()).toBe(false);
    await other.stop();
  });

  it('an agent that goes offline mid-wave hits the deadline and is charged to the failure budget', async () => {
    await joinFleet(h, 'off', 5, rings);
    const wid = await rolloutWorkload(h, 'off');
    const r0 = await startRollout(h, wid, threeWaves({ soakSeconds: 10, failureBudget: 1 }));
    const offline = new Set<string>();
    const final = await run(h, wid, r0.id, {
      offline,
      until: (r) => {
        // The moment ring-1 starts, its first cluster's agent disconnects.
        if (r.currentWave === 'ring-1') offline.add('off-2');
        return ['Succeeded', 'Failed', 'RolledBack', 'Aborted'].includes(r.phase);
      },
    });
    const c2 = final.clusters.find((c) => c.name === 'off-2')!;
    expect(c2.phase).toBe('Failed');
    expect(c2.message).toMatch(/not healthy within 60s/);
    expect(final.waves[1]!.message).toContain('1 failed');
    // Within the wave's budget of 1: the rest proceeded.
    expect(final.phase).toBe('Succeeded');
    expect(final.clusters.filter((c) => c.phase === 'Succeeded').length).toBe(4);
  });

  it('in-cluster canary steps are visible as the partition of the canary cluster’s CloneSet', async () => {
    await joinFleet(h, 'steps', 3, (i) => ({ ring: i === 1 ? '0' : '1' }));
    const wid = await rolloutWorkload(h, 'steps');
    const r0 = await startRollout(h, wid, {
      waves: [
        {
          name: 'canary',
          clusters: { names: ['steps-1'] },
          canarySteps: [
            { partition: '90%', pauseSeconds: 10 },
            { partition: 2, pauseSeconds: 10 },
          ],
        },
        { name: 'rest' },
      ],
    });
    const seen: (string | number | undefined)[] = [];
    const final = await run(h, wid, r0.id, {
      onDesired: (rows) => {
        const c = rows.find((r) => r.cluster === 'steps-1')!;
        const p = c.revision === 2 ? (c.manifest?.spec.updateStrategy?.partition ?? 'full') : undefined;
        if (p !== undefined && seen.at(-1) !== p) seen.push(p);
      },
    });
    expect(final.phase).toBe('Succeeded');
    expect(seen).toEqual(['90%', 2, 'full']);
  });

  it('names the field of every bad strategy and answers controls in the wrong state with 409 and the phase', async () => {
    await joinFleet(h, 'strict', 5, rings);
    const wid = await rolloutWorkload(h, 'strict');
    const reject = async (strategy: unknown): Promise<{ path: string; message: string }[]> => {
      const res = await call(h.app, 'POST', `/api/v1/workloads/${wid}/rollouts`, h.tokens.operator, { strategy });
      expect(res.statusCode, res.body).toBe(400);
      const error = res.json<{ error: { code: string; details: { path: string; message: string }[] } }>().error;
      expect(error.code).toBe('HUB_ERR_INVALID');
      return error.details;
    };
    // A wave whose selector matches no targeted cluster is empty.
    expect(
      await reject({
        waves: [{ name: 'a', clusters: { selector: { matchLabels: { ring: '9' } } } }, { name: 'b' }],
      }),
    ).toContainEqual({ path: 'strategy.waves[0]', message: expect.stringContaining('matches no targeted cluster') });
    // Overlapping selectors: ring 1 is in both waves.
    const overlap = await reject({
      waves: [
        { name: 'a', clusters: { names: ['strict-1'] } },
        { name: 'b', clusters: { selector: { matchLabels: { ring: '1' } } } },
        { name: 'c', clusters: { selector: { matchExpressions: [{ key: 'ring', operator: 'In', values: ['1'] }] } } },
      ],
    });
    expect(overlap).toContainEqual({ path: 'strategy.waves[2]', message: expect.stringContaining('must not overlap') });
    // Budgets above 100 %, per wave and for the whole rollout.
    const budgets = await reject({
      failureBudget: '101%',
      waves: [
        { name: 'a', clusters: { names: ['strict-1'] } },
        { name: 'b', failureBudget: '200%' },
      ],
    });
    expect(budgets.map((d) => d.path)).toEqual(
      expect.arrayContaining(['strategy.failureBudget', 'strategy.waves[1].failureBudget']),
    );
    // A named cluster the workload does not target, and targeted clusters left out of every wave.
    expect(await reject({ waves: [{ name: 'a', clusters: { names: ['nowhere'] } }] })).toEqual(
      expect.arrayContaining([
        { path: 'strategy.waves[0].clusters.names', message: expect.stringContaining('"nowhere"') },
        { path: 'strategy.waves', message: expect.stringContaining('in no wave') },
      ]),
    );

    const r0 = await startRollout(h, wid, threeWaves({ soakSeconds: 0 }));
    const conflict = async (what: string, body?: unknown): Promise<string> => {
      const res = await control(h, r0.id, what, body);
      expect(res.statusCode, `${what}: ${res.body}`).toBe(409);
      const error = res.json<{ error: { details: { path: string; message: string }[]; message: string } }>().error;
      return `${error.details.find((d) => d.path === 'phase')?.message} | ${error.message}`;
    };
    expect(await conflict('resume')).toMatch(/^Progressing \| cannot resume a rollout that is Progressing/);
    expect(await conflict('retry')).toMatch(/^Progressing \| .*no failed clusters/);
    expect((await run(h, wid, r0.id)).phase).toBe('Succeeded');
    for (const what of ['pause', 'resume', 'approve', 'abort', 'retry']) {
      expect(await conflict(what)).toMatch(/^Succeeded \| /);
    }
    const rb = await call(h.app, 'POST', `/api/v1/rollouts/${r0.id}/rollback`, h.tokens.operator);
    expect(rb.statusCode, rb.body).toBe(201);
    const again = await call(h.app, 'POST', `/api/v1/rollouts/${r0.id}/rollback`, h.tokens.operator);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.message).toContain('active rollout');
    // Unknown controls and fields are not guessed at.
    expect((await control(h, r0.id, 'promote')).statusCode).toBe(400);
    expect((await control(h, rb.json<{ id: string }>().id, 'pause', { force: true })).statusCode).toBe(400);
  });

  it('rejects bad input with clear 4xx errors', async () => {
    await joinFleet(h, 'bad-input', 3, rings);
    const wid = await rolloutWorkload(h, 'bad-input');
    const post = (body: unknown, token = h.tokens.operator) =>
      call(h.app, 'POST', `/api/v1/workloads/${wid}/rollouts`, token, body);
    const paths = async (body: unknown): Promise<string[]> => {
      const res = await post(body);
      expect(res.statusCode, res.body).toBe(400);
      return res.json<{ error: { details: { path: string }[] } }>().error.details.map((d) => d.path);
    };
    expect(await paths({ strategy: { waves: [{ name: 'a', clusters: { names: [] } }, { name: 'b' }] } })).toContain(
      'strategy.waves[0].clusters.names',
    );
    expect(await paths({ strategy: { waves: [] } })).toContain('strategy.waves');
    expect(
      await paths({
        strategy: {
          waves: [
            { name: 'a', clusters: { names: ['bad-input-1'] } },
            { name: 'b', clusters: { names: ['bad-input-1', 'bad-input-2', 'bad-input-3'] } },
          ],
        },
      }),
    ).toContain('strategy.waves[1]');
    expect(
      await paths({
        strategy: {
          waves: [
            { name: 'a', clusters: { names: ['bad-input-1'] } },
            { name: 'b', failureBudget: '150%' },
          ],
        },
      }),
    ).toContain('strategy.waves[1].failureBudget');
    expect(
      await paths({
        strategy: { waves: [{ name: 'a', clusters: { names: ['bad-input-1'] }, failureBudget: 1 }, { name: 'b' }] },
      }),
    ).toContain('strategy.waves[0].failureBudget');
    const good = { waves: [{ name: 'a', clusters: { names: ['bad-input-1'] } }, { name: 'b' }] };
    const unknown = await post({ revision: 99, strategy: good });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.message).toContain('revision 99');
    expect((await post({ strategy: good }, h.tokens.viewer)).statusCode).toBe(403);
    expect((await post({ strategy: good })).statusCode).toBe(201);
    const second = await post({ strategy: good });
    expect(second.statusCode).toBe(409);
    expect(second.json().error.message).toContain('active rollout');
    // An 'Immediate' workload is not rolled out.
    const imm = await call(h.app, 'POST', '/api/v1/workloads', h.tokens.operator, {
      kind: 'CloneSet',
      name: 'immediate-web',
      namespace: 'default',
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'x' } },
        template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'm', image: 'x:1' }] } },
      },
      placement: { clusterSelector: { matchLabels: { fleet: 'bad-input' } } },
    });
    expect(imm.statusCode, imm.body).toBe(201);
    const r = await call(h.app, 'POST', `/api/v1/workloads/${imm.json().id}/rollouts`, h.tokens.operator, {
      strategy: good,
    });
    expect(r.statusCode).toBe(409);
    expect(
      (await call(h.app, 'GET', '/api/v1/rollouts/00000000-0000-0000-0000-000000000000', h.tokens.viewer)).statusCode,
    ).toBe(404);
    expect((await control(h, 'not-a-uuid', 'pause')).statusCode).toBe(404);
  });
});
