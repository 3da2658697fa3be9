/**
 * Issue 26 end to end with REAL agents: the run's first four harness clusters, each with a real
 * agent process (hub link + CloneSet controller) registered with the hub, which runs as its own
 * process on Postgres and NATS (test/fleet). What is asserted is what the hub says and what the
 * clusters really ran:
 * - a plan preview equal to the plan the real start freezes;
 * - revision skew and "why is it stuck" mid-rollout, from the agents' own reports;
 * - a maintenance window that keeps one cluster waiting while the others of its wave proceed;
 * - a staged rollback that returns the clusters in reverse wave order;
 * - a dependency that holds a cluster until the workload it depends on is healthy there;
 * - metric analysis on every wave against a real Prometheus scraping one test exporter per
 *   cluster: passing, failing (the canary rolls back) and inconclusive (paused, saying why).
 * Rings: c1 is the canary (ring 0), c2 and c3 ring 1, c4 ring 2. The scenarios run one after the
 * other (a window is a property of the cluster, shared by every workload).
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Rollout, RolloutPreview } from '@flotilla/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExporter, startPrometheus, type Exporter, type Prometheus } from '@flotilla/test';
import { startFleet, type Fleet } from '../../fleet/fleet.js';
import {
  cloneSetReader,
  cloneSetSpec,
  createCloneSetWorkload,
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
  if (infos.length < 4) throw new Error('this suite needs FLOTILLA_TEST_CLUSTERS=4 (the default)');
  const suffix = Math.random().toString(36).slice(2, 7);
  ns = `beyond-${suffix}`;
  names = infos.map((c) => `bey-${c.name}`);
  fleet = await startFleet({
    dir: mkdtempSync(path.join(os.tmpdir(), 'flotilla-beyond-')),
    env: process.env,
    namespace: ns,
    scopeControllers: true,
    members: infos.map((c, i) => ({
      name: names[i]!,
      cluster: c,
      labels: { fleet: 'beyond', ring: i === 0 ? '0' : i <= 2 ? '1' : '2' },
    })),
    rolloutTickMs: 200,
    logLevel: 'info',
  });
  infos.forEach((c, i) => readers.set(names[i]!, cloneSetReader(c.kubeconfigPath)));
}, 240_000);

afterAll(async () => {
  await fleet?.stop();
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

/** A Rollout CloneSet at V1 settled on all four clusters, then revision 2 (moves nobody). */
async function deploy(name: string, overrides?: Record<string, unknown>): Promise<string> {
  const w: CloneSetWorkload = { name, namespace: ns, replicas: REPLICAS, image: V1, selector: { fleet: 'beyond' } };
  const id = await createCloneSetWorkload(fleet, w);
  await eventually(`${name} at ${V1} everywhere`, async () => {
    const all = await Promise.all(names.map((n) => readers.get(n)!(ns, name)));
    return all.every((cs) => settledAt(cs, V1, REPLICAS));
  });
  if (overrides) {
    // The new image and the overrides in one change: revision 2.
    const spec = (
      await fleet.api<{ spec: { template: { spec: { containers: { image: string }[] } } } }>('GET', `/workloads/${id}`)
    ).spec;
    spec.template.spec.containers[0]!.image = V2;
    const placement = { clusterSelector: { matchLabels: { fleet: 'beyond' } } };
    await fleet.api('PUT', `/workloads/${id}`, { spec, placement, overrides });
  } else if ((await setImage(fleet, id, w, V2)) !== 2) throw new Error(`${name}: the new image is not revision 2`);
  return id;
}

async function waitRollout(id: string, what: string, pred: (r: Rollout) => boolean, timeoutMs = 120_000) {
  let seen: Rollout | undefined;
  try {
    return await eventually(
      what,
      async () => {
        seen = await fleet.rollout(id);
        return pred(seen) ? seen : undefined;
      },
      timeoutMs,
      150,
    );
  } catch (err) {
    // Where it stood is what explains a timeout.
    throw new Error(`${(err as Error).message}; last seen ${seen?.phase}: ${seen ? story(seen) : '-'}`, {
      cause: err,
    });
  }
}

const done = (id: string): Promise<Rollout> =>
  waitRollout(id, `rollout ${id} finished`, (r) => TERMINAL.includes(r.phase));
const story = (r: Rollout): string =>
  `${r.message} | ${r.clusters.map((c) => `${c.name}: ${c.phase} (${c.message})`).join('; ')}`;
const byName = (r: Rollout) => Object.fromEntries(r.clusters.map((c) => [c.name, c]));

const threeWaves = (extra: Record<string, unknown> = {}, ring1: Record<string, unknown> = {}) => ({
  waves: [
    { name: 'canary', clusters: { selector: { matchLabels: { ring: '0' } } }, soakSeconds: 2 },
    { name: 'ring-1', clusters: { selector: { matchLabels: { ring: '1' } } }, soakSeconds: 2, ...ring1 },
    { name: 'rest', soakSeconds: 2 },
  ],
  ...extra,
});

describe('fleet rollouts beyond the anchors, with real agents', () => {
  it('previews exactly the plan the start freezes; mid-rollout shows skew and why it waits', async () => {
    const id = await deploy('preview');
    const strategy = threeWaves({}, { approval: 'Before' });
    const p = await fleet.api<RolloutPreview>('POST', `/workloads/${id}/rollouts`, { strategy, dryRun: true });
    expect(p.waves.map((w) => w.members)).toEqual([[names[0]], [names[1], names[2]], [names[3]]]);
    for (const c of p.clusters.filter((x) => x.included)) {
      expect(c.currentRevision).toBe(1);
      expect(c.diff).toContainEqual({ path: 'spec.template.spec.containers[0].image', from: V1, to: V2 });
    }
    const r0 = await startRollout(fleet, id, strategy);
    const frozen = await fleet.pool.query<{ plan: { waves: unknown[] } }>('select plan from rollouts where id = $1', [
      r0.id,
    ]);
    expect(p.waves.map(({ expectedStartAt: _s, expectedEndAt: _e, ...w }) => w)).toEqual(frozen.rows[0]!.plan.waves);

    // The canary runs v2 (its agent says so), the others v1; the rollout waits for approval.
    const waiting = await waitRollout(
      r0.id,
      'canary reported at revision 2, waiting for approval',
      (r) => r.phase === 'WaitingApproval' && byName(r)[names[0]!]!.runningRevision === 2,
    );
    expect(waiting.skew, story(waiting)).toBe(true);
    expect(waiting.revisions).toEqual([
      { revision: 1, clusters: 3 },
      { revision: 2, clusters: 1 },
    ]);
    expect(waiting.waits).toEqual({ approval: 3 });
    await fleet.api('POST', `/rollouts/${r0.id}/approve`, {});
    const final = await done(r0.id);
    expect(final.phase, story(final)).toBe('Succeeded');
    const settled = await waitRollout(
      r0.id,
      'every agent reports revision 2',
      (r) => !r.skew && r.revisions.length === 1,
    );
    expect(settled.revisions).toEqual([{ revision: 2, clusters: 4 }]);
  });

  it('a closed maintenance window keeps one cluster waiting while its wave goes on; it starts once open', async () => {
    const id = await deploy('window');
    const held = names[2]!;
    // Opens at 03:00 on 29 February only: closed now, whatever the clock says.
    await fleet.api('PUT', `/clusters/${held}/maintenance-windows`, {
      windows: [{ cron: '0 3 29 2 *', duration: '1h', timeZone: 'Europe/Berlin' }],
    });
    try {
      const r0 = await startRollout(fleet, id, threeWaves());
      const waiting = await waitRollout(
        r0.id,
        `${names[1]} done while ${held} waits for its window`,
        (r) => byName(r)[names[1]!]!.phase === 'Succeeded' && byName(r)[held]!.waitingFor === 'window',
      );
      expect(byName(waiting)[held]).toMatchObject({ phase: 'Pending', runningRevision: 1 });
      expect(Date.parse(byName(waiting)[held]!.waitingUntil!)).toBeGreaterThan(Date.now());
      expect(waiting.currentWave).toBe('ring-1');
      expect((await readers.get(held)!(ns, 'window'))!.image).toBe(V1);
      // Any minute, for an hour: open now.
      await fleet.api('PUT', `/clusters/${held}/maintenance-windows`, {
        windows: [{ cron: '* * * * *', duration: '1h', timeZone: 'UTC' }],
      });
      const started = await waitRollout(
        r0.id,
        `${held} started once its window opened`,
        (r) => byName(r)[held]!.phase !== 'Pending',
      );
      expect(byName(started)[held]!.waitingFor).not.toBe('window');
      const final = await done(r0.id);
      expect(final.phase, story(final)).toBe('Succeeded');
      expect(Date.parse(byName(final)[held]!.startedAt!)).toBeGreaterThan(
        Date.parse(byName(final)[names[1]!]!.startedAt!),
      );
    } finally {
      await fleet.api('PUT', `/clusters/${held}/maintenance-windows`, { windows: [] });
    }
  }, 300_000);

  it('a staged rollback returns the moved clusters in reverse wave order', async () => {
    // The last wave's cluster gets an image that never becomes ready.
    const broken = { [names[3]!]: { template: { spec: { containers: [{ name: 'main', image: BROKEN }] } } } };
    const id = await deploy('staged', broken);
    const strategy = threeWaves({ rollback: 'Staged' });
    Object.assign(strategy.waves[2]!, { progressDeadlineSeconds: 8 });
    const r0 = await startRollout(fleet, id, strategy);
    const failed = await done(r0.id);
    expect(failed.phase, story(failed)).toBe('Failed');
    const list = await fleet.api<{ items: (Rollout & { rollbackOf: string | null })[] }>(
      'GET',
      `/workloads/${id}/rollouts`,
    );
    const back = list.items.find((r) => r.rollbackOf === r0.id)!;
    expect(back.waves.map((w) => w.members)).toEqual([[names[3]], [names[2], names[1]], [names[0]]]);
    const final = await done(back.id);
    expect(final.phase, story(final)).toBe('Succeeded');
    // What the clusters ran: each back at v1, the canary last.
    const at = new Map<string, number>();
    await eventually('every cluster back at v1', async () => {
      for (const n of names) {
        if (!at.has(n) && settledAt(await readers.get(n)!(ns, 'staged'), V1, REPLICAS)) at.set(n, Date.now());
      }
      return at.size === names.length;
    });
    const started = Object.fromEntries(final.clusters.map((c) => [c.name, Date.parse(c.startedAt!)]));
    expect(started[names[3]!]).toBeLessThan(started[names[1]!]!);
    expect(started[names[1]!]).toBeLessThan(started[names[0]!]!);
    expect(started[names[2]!]).toBeLessThan(started[names[0]!]!);
  });

  it('a dependency holds a cluster until the workload it depends on is healthy there', async () => {
    // deps-db runs everywhere, but on the second cluster with an image that never becomes ready.
    const placement = { clusterSelector: { matchLabels: { fleet: 'beyond' } } };
    const dbSpec = cloneSetSpec('deps-db', REPLICAS, V1);
    const held = names[1]!;
    const broken = { [held]: { template: { spec: { containers: [{ name: 'main', image: BROKEN }] } } } };
    const db = await fleet.api<{ id: string }>('POST', '/workloads', {
      kind: 'CloneSet',
      name: 'deps-db',
      namespace: ns,
      spec: dbSpec,
      placement,
      overrides: broken,
    });
    const id = await deploy('deps-app');
    const app = await fleet.api<{ spec: unknown }>('GET', `/workloads/${id}`);
    await fleet.api('PUT', `/workloads/${id}`, {
      spec: app.spec,
      placement,
      dependsOn: [{ kind: 'CloneSet', name: 'deps-db' }],
    });
    const r0 = await startRollout(fleet, id, { waves: [{ name: 'all', maxConcurrency: 4, soakSeconds: 2 }] });
    const waiting = await waitRollout(
      r0.id,
      `the others done while ${held} waits for deps-db`,
      (r) =>
        names.filter((n) => n !== held).every((n) => byName(r)[n]!.phase === 'Succeeded') &&
        byName(r)[held]!.waitingFor === 'dependency',
    );
    expect(byName(waiting)[held]!.message).toContain(`CloneSet ${ns}/deps-db`);
    expect(waiting.waits).toEqual({ dependency: 1 });
    expect((await readers.get(held)!(ns, 'deps-app'))!.image).toBe(V1);
    // deps-db is healed on that cluster: the held cluster starts, and the rollout finishes.
    await fleet.api('PUT', `/workloads/${db.id}`, { spec: dbSpec, placement });
    const final = await done(r0.id);
    expect(final.phase, story(final)).toBe('Succeeded');
    await eventually(`${held} runs deps-app at ${V2}`, async () =>
      settledAt(await readers.get(held)!(ns, 'deps-app'), V2, REPLICAS),
    );
  });

  it('metric analysis on every wave: passing goes on, failing rolls back, inconclusive pauses saying why', async () => {
    const metric = 'flotilla_test_error_ratio';
    const exporters: Exporter[] = [];
    let prom: Prometheus | undefined;
    try {
      for (const _ of names) {
        const e = await startExporter();
        e.set(metric, 0.01);
        exporters.push(e);
      }
      prom = await startPrometheus({
        dir: mkdtempSync(path.join(os.tmpdir(), 'flotilla-beyond-prometheus-')),
        targets: names.map((n, i) => ({ target: exporters[i]!.host, labels: { cluster: n } })),
      });
      // Every cluster's series scraped before the first measurement: an empty answer is inconclusive.
      for (const n of names) await prom.waitForValue(`${metric}{cluster="${n}"}`, 0.01);
      for (const n of names) await fleet.api('PUT', `/clusters/${n}/prometheus`, { url: prom.url });
      const ratio = async (i: number, value: number) => {
        exporters[i]!.set(metric, value);
        await prom!.waitForValue(`${metric}{cluster="${names[i]}"}`, value);
      };
      const analysis = {
        queries: [
          {
            name: 'errors',
            query: `max(${metric}{cluster="{{cluster}}"})`,
            successCondition: 'result < 0.05',
            failureCondition: 'result >= 0.1',
          },
        ],
        intervalSeconds: 1,
        count: 2,
      };
      const analysed = (extra: Record<string, unknown> = {}) => {
        const s = threeWaves(extra);
        for (const w of s.waves) Object.assign(w, { soakSeconds: 1, analysis });
        return s;
      };

      // Passing: every cluster measured twice at 0.01, each wave after the last one's analysis.
      const pass = await deploy('an-pass');
      const passed = await done((await startRollout(fleet, pass, analysed())).id);
      expect(passed.phase, story(passed)).toBe('Succeeded');
      for (const c of passed.clusters) {
        expect(c.analysis, c.name).toMatchObject({ verdict: 'Passed', measurements: 2, results: [{ value: 0.01 }] });
      }

      // Failing: the canary's error ratio is high; its zero budget rolls the rollout back.
      await ratio(0, 0.3);
      const fail = await deploy('an-fail');
      const failed = await done((await startRollout(fleet, fail, analysed({ onFailure: 'Rollback' }))).id);
      expect(failed.phase, story(failed)).toBe('RolledBack');
      expect(byName(failed)[names[0]!]).toMatchObject({
        phase: 'RolledBack',
        analysis: { verdict: 'Failed', results: [{ value: 0.3, outcome: 'Failed' }] },
      });
      expect(byName(failed)[names[1]!]!.phase).toBe('Pending');
      await eventually(`${names[0]} back at ${V1}`, async () =>
        settledAt(await readers.get(names[0]!)!(ns, 'an-fail'), V1, REPLICAS),
      );

      // Inconclusive: between the conditions on a ring-1 cluster; paused naming it; fixed, resumed.
      await ratio(0, 0.01);
      await ratio(1, 0.07);
      const unsure = await deploy('an-unsure');
      const r0 = await startRollout(fleet, unsure, analysed());
      const paused = await waitRollout(r0.id, 'paused on an inconclusive analysis', (r) => r.phase === 'Paused');
      expect(paused.message).toBe(
        `cluster ${names[1]}: analysis inconclusive (errors: neither condition holds (0.07)); resume to measure again`,
      );
      expect(byName(paused)[names[0]!]!.phase).toBe('Succeeded');
      await ratio(1, 0.01);
      await fleet.api('POST', `/rollouts/${r0.id}/resume`, {});
      const resumed = await done(r0.id);
      expect(resumed.phase, story(resumed)).toBe('Succeeded');
      expect(byName(resumed)[names[1]!]!.analysis).toMatchObject({ attempt: 2, verdict: 'Passed' });
    } finally {
      for (const n of names) await fleet.api('PUT', `/clusters/${n}/prometheus`, { url: null }).catch(() => undefined);
      await prom?.stop();
      for (const e of exporters) await e.stop();
    }
  }, 240_000);
});
