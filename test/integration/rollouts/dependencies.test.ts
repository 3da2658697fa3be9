/**
 * Workload dependencies on real Postgres with the real app and scheduler and SIMULATED agents
 * (harness.ts, fake clock): dependsOn is refused at the API naming the field when it names no live
 * workload, the workload itself, or closes a cycle, and a workload others depend on cannot be
 * deleted; in a rollout, a cluster starts only once its dependency is healthy there at the
 * revision the hub sent, and a dependency not placed on a member pauses the rollout saying so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, cloneSetSpec } from '../hub/fixtures.js';
import {
  agentsReport,
  createHarness,
  getRollout,
  joinFleet,
  startRollout,
  type Harness,
  type Health,
  type RolloutView,
} from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await createHarness('flotilla_deps');
});

afterAll(async () => {
  await h?.close();
});

interface Created {
  id: string;
  dependsOn: unknown[];
}

async function createWorkload(name: string, selector: Record<string, string>, extra: Record<string, unknown> = {}) {
  return call(h.app, 'POST', '/api/v1/workloads', h.tokens.operator, {
    kind: 'CloneSet',
    name,
    namespace: 'apps',
    spec: cloneSetSpec(2, 'registry.local/app:v1'),
    placement: { clusterSelector: { matchLabels: selector } },
    ...extra,
  });
}

async function created(name: string, selector: Record<string, string>, extra: Record<string, unknown> = {}) {
  const res = await createWorkload(name, selector, extra);
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Created>();
}

/** A 'Rollout' workload at revision 2 that depends on `dependsOn`. */
async function dependent(name: string, selector: Record<string, string>, dependsOn: unknown[]): Promise<string> {
  const w = await created(name, selector, { updatePolicy: 'Rollout', dependsOn });
  const updated = await call(h.app, 'PUT', `/api/v1/workloads/${w.id}`, h.tokens.operator, {
    spec: cloneSetSpec(2, 'registry.local/app:v2'),
    placement: { clusterSelector: { matchLabels: selector } },
    updatePolicy: 'Rollout',
    dependsOn,
  });
  expect(updated.statusCode, updated.body).toBe(200);
  return w.id;
}

/** Ticks: every agent reports, `health` per workload, and the scheduler steps; until `until`. */
async function runWith(
  rolloutId: string,
  reports: Record<string, (cluster: string) => Health>,
  until: (r: RolloutView) => boolean,
): Promise<RolloutView> {
  for (let i = 0; i < 100; i++) {
    h.advance(5000);
    for (const [wid, health] of Object.entries(reports)) await agentsReport(h, wid, (c) => health(c));
    await h.scheduler.tick();
    const r = await getRollout(h, rolloutId);
    if (until(r)) return r;
  }
  throw new Error(`rollout ${rolloutId} did not reach the expected state`);
}

const errorOf = (res: { body: string; json: <T>() => T }) =>
  res.json<{ error: { code: string; message: string; details?: { path: string; message: string }[] } }>().error;

describe('workload dependencies', () => {
  it('are refused at the API naming the field: unknown, itself, a cycle; a depended-on workload stays', async () => {
    const db = await created('val-db', { fleet: 'val' });
    const unknown = await createWorkload(
      'val-web',
      { fleet: 'val' },
      { dependsOn: [{ kind: 'CloneSet', name: 'nope' }] },
    );
    expect(unknown.statusCode).toBe(400);
    expect(errorOf(unknown).details).toEqual([
      { path: 'dependsOn[0]', message: 'no live workload CloneSet apps/nope' },
    ]);
    const selfRef = await createWorkload(
      'val-self',
      { fleet: 'val' },
      { dependsOn: [{ kind: 'CloneSet', name: 'val-self' }] },
    );
    expect(selfRef.statusCode).toBe(400);
    expect(errorOf(selfRef).message).toContain('dependsOn[0]: a workload cannot depend on itself');

    const web = await created('val-web', { fleet: 'val' }, { dependsOn: [{ kind: 'CloneSet', name: 'val-db' }] });
    expect(web.dependsOn).toEqual([{ kind: 'CloneSet', name: 'val-db', namespace: 'apps' }]);
    const cycle = await call(h.app, 'PUT', `/api/v1/workloads/${db.id}`, h.tokens.operator, {
      spec: cloneSetSpec(2, 'registry.local/app:v1'),
      placement: { clusterSelector: { matchLabels: { fleet: 'val' } } },
      dependsOn: [{ kind: 'CloneSet', name: 'val-web' }],
    });
    expect(cycle.statusCode).toBe(400);
    expect(errorOf(cycle).details).toEqual([
      { path: 'dependsOn', message: 'the dependencies form a cycle: apps/val-db → apps/val-web → apps/val-db' },
    ]);
    const del = await call(h.app, 'DELETE', `/api/v1/workloads/${db.id}`, h.tokens.operator);
    expect(del.statusCode).toBe(409);
    expect(errorOf(del).message).toContain('CloneSet apps/val-web depend on it');
    // Once nothing depends on it, it goes.
    expect((await call(h.app, 'DELETE', `/api/v1/workloads/${web.id}`, h.tokens.operator)).statusCode).toBe(204);
    expect((await call(h.app, 'DELETE', `/api/v1/workloads/${db.id}`, h.tokens.operator)).statusCode).toBe(204);
  });

  it('hold a cluster until its dependency is healthy there at its target revision', async () => {
    await joinFleet(h, 'dep', 2);
    const db = await created('dep-db', { fleet: 'dep' });
    const web = await dependent('dep-web', { fleet: 'dep' }, [{ kind: 'CloneSet', name: 'dep-db' }]);
    const r0 = await startRollout(h, web, { waves: [{ name: 'all', soakSeconds: 10 }] });
    let dbHealthOnDep2: Health = 'Progressing';
    const held = await runWith(
      r0.id,
      { [db.id]: (c) => (c === 'dep-2' ? dbHealthOnDep2 : 'Healthy'), [web]: () => 'Healthy' },
      (r) => r.clusters.find((c) => c.name === 'dep-1')?.phase === 'Succeeded',
    );
    expect(held.clusters.find((c) => c.name === 'dep-2')).toMatchObject({
      phase: 'Pending',
      waitingFor: 'dependency',
      message: 'waiting for CloneSet apps/dep-db to be healthy at its target revision',
      runningRevision: 1,
    });
    expect(held.waits).toEqual({ dependency: 1 });
    dbHealthOnDep2 = 'Healthy';
    const final = await runWith(
      r0.id,
      { [db.id]: () => 'Healthy', [web]: () => 'Healthy' },
      (r) => r.phase !== 'Progressing',
    );
    expect(final.phase, final.message).toBe('Succeeded');
    expect(Date.parse(final.clusters.find((c) => c.name === 'dep-2')!.startedAt!)).toBeGreaterThan(
      Date.parse(held.clusters.find((c) => c.name === 'dep-1')!.finishedAt!) - 1,
    );
  });

  it('pause the rollout, naming cluster and dependency, when the dependency is not placed on a member', async () => {
    await joinFleet(h, 'miss', 2, (i) => ({ side: i === 1 ? 'a' : 'b' }));
    const cache = await created('miss-cache', { fleet: 'miss', side: 'a' });
    const api = await dependent('miss-api', { fleet: 'miss' }, [{ kind: 'CloneSet', name: 'miss-cache' }]);
    const r0 = await startRollout(h, api, { waves: [{ name: 'all', soakSeconds: 10 }] });
    const paused = await runWith(
      r0.id,
      { [cache.id]: () => 'Healthy', [api]: () => 'Healthy' },
      (r) => r.phase === 'Paused',
    );
    expect(paused.message).toBe(
      'cluster miss-2 depends on CloneSet apps/miss-cache, which is not placed there; place it or change dependsOn, then resume',
    );
    expect(paused.clusters.find((c) => c.name === 'miss-2')!.phase).toBe('Pending');
  });
});
