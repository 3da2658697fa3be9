/**
 * Metric analysis per wave on real Postgres with the real app and scheduler, SIMULATED agents
 * (harness.ts, fake clock) and a REAL Prometheus scraping one test exporter per cluster whose
 * error ratio the test sets. The scheduler counts analysis intervals on its (fake) clock; each
 * measurement asks Prometheus for the value now. An analysis that passes lets its clusters soak
 * and succeed; one that fails fails the cluster (here the canary: the rollout rolls back); an
 * unreachable Prometheus is inconclusive: the rollout pauses saying why, and a resume measures
 * again. Bad analysis input is refused naming the field.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createCa,
  freePort,
  issueServingCert,
  PROMETHEUS_TEST_USER,
  startExporter,
  startPrometheus,
  type Exporter,
  type Prometheus,
} from '@flotilla/test';
import { call } from '../hub/fixtures.js';
import {
  control,
  createHarness,
  eventsOf,
  getRollout,
  joinFleet,
  rolloutWorkload,
  run,
  startRollout,
  type Harness,
  type RolloutView,
} from './harness.js';

const METRIC = 'flotilla_test_error_ratio';
/** The clusters the tests create, each with its own exporter. */
const CLUSTERS = ['anp-1', 'anp-2', 'anf-1', 'anf-2', 'ani-1', 'anq-1', 'ant-1', 'anx-1'];

let h: Harness;
let prom: Prometheus;
/** A second real Prometheus serving https with a test CA's certificate and asking for basic auth. */
let secure: Prometheus;
const secrets = mkdtempSync(path.join(os.tmpdir(), 'flotilla-prometheus-secrets-'));
const TOKEN = 'pr0m-t0ken-value';
/** A Prometheus behind bearer auth: a proxy that forwards only requests carrying TOKEN. */
let guarded: { url: string; close(): void };
const exporters = new Map<string, Exporter>();

beforeAll(async () => {
  h = await createHarness('flotilla_analysis', { prometheusSecretsDir: secrets });
  for (const c of CLUSTERS) {
    const e = await startExporter();
    e.set(METRIC, 0.01);
    exporters.set(c, e);
  }
  for (const bad of ['anf-1', 'anq-1']) exporters.get(bad)!.set(METRIC, 0.3);
  prom = await startPrometheus({
    dir: mkdtempSync(path.join(os.tmpdir(), 'flotilla-prometheus-')),
    targets: CLUSTERS.map((c) => ({ target: exporters.get(c)!.host, labels: { cluster: c } })),
  });
  const proxy = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401).end('unauthorized');
      return;
    }
    void fetch(`${prom.url}${req.url}`).then(async (r) => res.writeHead(r.status).end(await r.text()));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  guarded = {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    close: () => proxy.close(),
  };
  const pkiDir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-prometheus-pki-'));
  const ca = await createCa(pkiDir, 'flotilla-prometheus-ca');
  const cert = await issueServingCert(ca, 'prometheus', ['IP:127.0.0.1']);
  writeFileSync(path.join(secrets, 'anx-ca.pem'), ca.caPem);
  secure = await startPrometheus({
    dir: mkdtempSync(path.join(os.tmpdir(), 'flotilla-prometheus-secure-')),
    name: 'prometheus-secure',
    targets: [{ target: exporters.get('anx-1')!.host, labels: { cluster: 'anx-1' } }],
    tls: { certFile: cert.cert, keyFile: cert.key, caPem: ca.caPem },
    basicAuth: PROMETHEUS_TEST_USER,
  });
  await secure.waitForValue(`${METRIC}{cluster="anx-1"}`, 0.01);
  for (const c of CLUSTERS) {
    await prom.waitForValue(`${METRIC}{cluster="${c}"}`, c === 'anf-1' || c === 'anq-1' ? 0.3 : 0.01);
  }
}, 120_000);

afterAll(async () => {
  guarded?.close();
  await h?.close();
  await prom?.stop();
  await secure?.stop();
  for (const e of exporters.values()) await e.stop();
});

const analysis = {
  queries: [
    {
      name: 'errors',
      query: `max(${METRIC}{cluster="{{cluster}}"})`,
      successCondition: 'result < 0.05',
      failureCondition: 'result >= 0.1',
    },
  ],
  intervalSeconds: 30,
  count: 3,
};

function strategy(canary: string, extra: Record<string, unknown> = {}) {
  return {
    waves: [
      { name: 'canary', clusters: { names: [canary] }, soakSeconds: 10, analysis },
      { name: 'rest', soakSeconds: 10, analysis },
    ],
    ...extra,
  };
}

async function setPrometheus(cluster: string, url: string | null) {
  return call(h.app, 'PUT', `/api/v1/clusters/${cluster}/prometheus`, h.tokens.operator, { url });
}

const byName = (r: RolloutView) => Object.fromEntries(r.clusters.map((c) => [c.name, c]));

describe('metric analysis per wave', () => {
  it('passes on a low error ratio: each cluster is measured count times, then soaks and succeeds', async () => {
    const clusters = await joinFleet(h, 'anp', 2);
    for (const c of clusters) {
      const res = await setPrometheus(c, prom.url);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ name: c, prometheusUrl: prom.url });
    }
    const wid = await rolloutWorkload(h, 'anp');
    const r0 = await startRollout(h, wid, strategy('anp-1'));
    const measuring = await run(h, wid, r0.id, {
      until: (r) =>
        byName(r)['anp-1']!.waitingFor === 'analysis' && (byName(r)['anp-1']!.analysis?.measurements ?? 0) >= 1,
    });
    expect(measuring.waits).toMatchObject({ analysis: 1 });
    expect(byName(measuring)['anp-1']!.analysis).toMatchObject({ attempt: 1, verdict: 'Running', count: 3 });
    // The canary's analysis holds the next wave.
    expect(byName(measuring)['anp-2']!.phase).toBe('Pending');

    const done = await run(h, wid, r0.id);
    expect(done.phase, done.message).toBe('Succeeded');
    expect(done.waves[1]).toMatchObject({ name: 'rest', analysis: { ...analysis, count: 3, intervalSeconds: 30 } });
    for (const c of clusters) {
      expect(byName(done)[c]!.analysis).toMatchObject({
        attempt: 1,
        verdict: 'Passed',
        measurements: 3,
        count: 3,
        results: [{ name: 'errors', value: 0.01, outcome: 'Passed', message: 'result < 0.05 (0.01)' }],
      });
    }
    const events = (await eventsOf(h, r0.id)).map((e) => e.message);
    expect(events).toContain('cluster anp-1: analysis passed (3/3)');
    const stored = await h.hub.pool.query('select count(*)::int as n from analysis_runs where rollout_id = $1', [
      r0.id,
    ]);
    expect(stored.rows[0]).toEqual({ n: 2 });
  });

  it('fails the cluster on a high error ratio; the canary has no budget, so the rollout rolls back', async () => {
    const clusters = await joinFleet(h, 'anf', 2);
    for (const c of clusters) expect((await setPrometheus(c, prom.url)).statusCode).toBe(200);
    const wid = await rolloutWorkload(h, 'anf');
    const r0 = await startRollout(h, wid, strategy('anf-1', { onFailure: 'Rollback' }));
    const done = await run(h, wid, r0.id);
    expect(done.phase).toBe('RolledBack');
    expect(done.message).toContain('failed: anf-1');
    const canary = byName(done)['anf-1']!;
    expect(canary.phase).toBe('RolledBack');
    expect(canary.analysis).toMatchObject({
      verdict: 'Failed',
      measurements: 1,
      results: [{ value: 0.3, outcome: 'Failed', message: 'result >= 0.1 (0.3)' }],
    });
    // The failure is the cluster's, and the next wave never started.
    const events = (await eventsOf(h, r0.id)).map((e) => e.message);
    expect(events).toContain('cluster anf-1 failed: analysis failed: errors: result >= 0.1 (0.3)');
    expect(byName(done)['anf-2']!.phase).toBe('Pending');
  });

  it('with onFailure Pause, a failed analysis pauses the rollout for the exceeded budget', async () => {
    const [c] = await joinFleet(h, 'anq', 1);
    expect((await setPrometheus(c!, prom.url)).statusCode).toBe(200);
    const wid = await rolloutWorkload(h, 'anq');
    const r0 = await startRollout(h, wid, { waves: [{ name: 'all', analysis }], onFailure: 'Pause' });
    const paused = await run(h, wid, r0.id, { until: (r) => r.phase === 'Paused' });
    expect(paused.message).toBe('wave "all" exceeded its failure budget of 0 (failed: anq-1); paused');
    expect(byName(paused)[c!]).toMatchObject({
      phase: 'Failed',
      message: 'analysis failed: errors: result >= 0.1 (0.3)',
      analysis: { verdict: 'Failed' },
    });
  });

  it('pauses on an unreachable Prometheus, saying why; a resume measures again', async () => {
    const [c] = await joinFleet(h, 'ani', 1);
    const closed = `http://127.0.0.1:${await freePort()}`;
    expect((await setPrometheus(c!, closed)).statusCode).toBe(200);
    const wid = await rolloutWorkload(h, 'ani');
    const r0 = await startRollout(h, wid, { waves: [{ name: 'all', soakSeconds: 10, analysis }] });
    const paused = await run(h, wid, r0.id, { until: (r) => r.phase === 'Paused' });
    expect(paused.message).toMatch(
      /^cluster ani-1: analysis inconclusive \(errors: Prometheus unreachable: .+\); resume/,
    );
    expect(byName(paused)[c!]).toMatchObject({
      phase: 'Soaking',
      waitingFor: 'paused',
      analysis: { attempt: 1, verdict: 'Inconclusive', results: [{ value: null, outcome: 'Inconclusive' }] },
    });
    // The scheduler is not stuck: ticks go on, and the rollout stays paused.
    const again = await run(h, wid, r0.id, { maxSteps: 3, until: () => false }).catch(() => undefined);
    expect(again).toBeUndefined();
    expect((await getRollout(h, r0.id)).phase).toBe('Paused');

    expect((await setPrometheus(c!, prom.url)).statusCode).toBe(200);
    expect((await control(h, r0.id, 'resume')).statusCode).toBe(200);
    const done = await run(h, wid, r0.id);
    expect(done.phase, done.message).toBe('Succeeded');
    expect(byName(done)[c!]!.analysis).toMatchObject({ attempt: 2, verdict: 'Passed', measurements: 3 });
  });

  it('sends a bearer token given by reference; the token itself never passes through the API', async () => {
    const [c] = await joinFleet(h, 'ant', 1);
    const set = await call(h.app, 'PUT', `/api/v1/clusters/${c}/prometheus`, h.tokens.operator, {
      url: guarded.url,
      tokenRef: 'ant-token',
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ prometheusUrl: guarded.url, prometheusTokenRef: 'ant-token' });
    const bad = await call(h.app, 'PUT', `/api/v1/clusters/${c}/prometheus`, h.tokens.operator, {
      url: guarded.url,
      tokenRef: '../etc/passwd',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('tokenRef');

    const wid = await rolloutWorkload(h, 'ant');
    const r0 = await startRollout(h, wid, { waves: [{ name: 'all', analysis }] });
    // The referenced file does not exist yet: inconclusive, paused, naming the reference.
    const paused = await run(h, wid, r0.id, { until: (r) => r.phase === 'Paused' });
    expect(paused.message).toContain('token "ant-token" is not readable in FLOTILLA_PROMETHEUS_SECRETS_DIR');

    writeFileSync(path.join(secrets, 'ant-token'), `${TOKEN}\n`);
    expect((await control(h, r0.id, 'resume')).statusCode).toBe(200);
    const done = await run(h, wid, r0.id);
    expect(done.phase, done.message).toBe('Succeeded');
    expect(byName(done)[c!]!.analysis).toMatchObject({ attempt: 2, verdict: 'Passed', results: [{ value: 0.01 }] });
    const shown = await call(h.app, 'GET', `/api/v1/clusters/${c}`, h.tokens.viewer);
    expect(shown.body).not.toContain(TOKEN);
  });

  it('verifies an https Prometheus with a CA and sends basic auth, all by reference', async () => {
    const [c] = await joinFleet(h, 'anx', 1);
    const put = (body: unknown) => call(h.app, 'PUT', `/api/v1/clusters/${c}/prometheus`, h.tokens.operator, body);
    const basicAuth = { usernameRef: 'anx-user', passwordRef: 'anx-password' };
    const both = await put({ url: secure.url, tokenRef: 'ant-token', basicAuth });
    expect(both.statusCode).toBe(400);
    expect(both.json<{ error: { details: { path: string }[] } }>().error.details.map((d) => d.path)).toEqual([
      'basicAuth',
    ]);
    const caOverHttp = await put({ url: prom.url, caRef: 'anx-ca.pem' });
    expect(caOverHttp.statusCode).toBe(400);
    expect(caOverHttp.body).toContain('"path":"caRef"');
    const halfAuth = await put({ url: secure.url, basicAuth: { usernameRef: 'anx-user' } });
    expect(halfAuth.statusCode).toBe(400);
    expect(halfAuth.body).toContain('passwordRef');

    // No CA yet: the test CA's certificate does not verify, so the measurement cannot be taken.
    writeFileSync(path.join(secrets, 'anx-user'), `${PROMETHEUS_TEST_USER.username}\n`);
    writeFileSync(path.join(secrets, 'anx-password'), 'not-the-password\n');
    expect((await put({ url: secure.url, basicAuth })).statusCode).toBe(200);
    const wid = await rolloutWorkload(h, 'anx');
    const r0 = await startRollout(h, wid, { waves: [{ name: 'all', analysis }] });
    const untrusted = await run(h, wid, r0.id, { until: (r) => r.phase === 'Paused' });
    expect(untrusted.message).toMatch(/analysis inconclusive \(errors: Prometheus unreachable: .*certificate/);

    // With the CA the connection verifies; the wrong password is refused by Prometheus itself.
    const set = await put({ url: secure.url, basicAuth, caRef: 'anx-ca.pem' });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({
      prometheusUrl: secure.url,
      prometheusBasicAuth: basicAuth,
      prometheusCaRef: 'anx-ca.pem',
    });
    expect((await control(h, r0.id, 'resume')).statusCode).toBe(200);
    const refused = await run(h, wid, r0.id, { until: (r) => r.phase === 'Paused' });
    expect(refused.message).toContain('Prometheus refused the credentials (HTTP 401)');

    // The password file is read at each measurement: fixed, the next attempt passes.
    writeFileSync(path.join(secrets, 'anx-password'), `${PROMETHEUS_TEST_USER.password}\n`);
    expect((await control(h, r0.id, 'resume')).statusCode).toBe(200);
    const done = await run(h, wid, r0.id);
    expect(done.phase, done.message).toBe('Succeeded');
    expect(byName(done)[c!]!.analysis).toMatchObject({ attempt: 3, verdict: 'Passed', results: [{ value: 0.01 }] });
    // Neither the API nor the audit log holds what the files hold.
    const shown = await call(h.app, 'GET', `/api/v1/clusters/${c}`, h.tokens.viewer);
    expect(shown.body).not.toContain(PROMETHEUS_TEST_USER.password);
    const audit = await h.hub.pool.query(
      `select details::text as d from audit_log where action = 'cluster.prometheus'`,
    );
    expect(audit.rows.map((r: { d: string }) => r.d).join('\n')).not.toContain(PROMETHEUS_TEST_USER.password);
  });

  it('refuses bad analysis input and Prometheus URLs naming the field', async () => {
    const [c] = await joinFleet(h, 'anb', 1);
    const withCreds = await setPrometheus(c!, 'https://user:secret@prom.example:9090');
    expect(withCreds.statusCode).toBe(400);
    expect(withCreds.body).toContain('"path":"url"');
    // The secret is never echoed.
    expect(withCreds.body).not.toContain('secret');
    expect((await setPrometheus(c!, 'ftp://prom.example')).statusCode).toBe(400);

    const wid = await rolloutWorkload(h, 'anb');
    const wave1 = (a: unknown) => ({
      strategy: {
        waves: [
          { name: 'canary', clusters: { names: [c] } },
          { name: 'rest', analysis: a },
        ],
      },
    });
    const refused = async (a: unknown): Promise<string[]> => {
      const res = await call(h.app, 'POST', `/api/v1/workloads/${wid}/rollouts`, h.tokens.operator, wave1(a));
      expect(res.statusCode, res.body).toBe(400);
      return res.json<{ error: { details: { path: string }[] } }>().error.details.map((d) => d.path);
    };
    const a = { name: 'a', query: 'sum(rate(x{c="{{cluster}}"}[5m]))', successCondition: 'result < 0.05' };
    expect(
      await refused({
        queries: [
          { ...a, query: 'sum(rate(x{c="{{cluster}}"}[5m])' },
          { ...a, name: 'b', query: 'x{pod="{{pod}}"}', successCondition: 'result is low' },
        ],
      }),
    ).toEqual([
      'strategy.waves[1].analysis.queries[0].query',
      'strategy.waves[1].analysis.queries[1].query',
      'strategy.waves[1].analysis.queries[1].successCondition',
    ]);
    expect(await refused({ queries: [a], count: 0 })).toEqual(['strategy.waves[1].analysis.count']);
    expect(await refused({ queries: [a], intervalSeconds: 7200 })).toEqual([
      'strategy.waves[1].analysis.intervalSeconds',
    ]);
  });
});
