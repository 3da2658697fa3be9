/**
 * The hub's REST surface under attack, against a real Postgres: the workload admission policy
 * (the probe's privileged CloneSet in kube-system), auth before body validation, bounds that
 * keep hostile numbers, tokens and documents from becoming 500s, a claim that leaks no cluster
 * names, Kubernetes label rules, no query values in request logs, and every limit (request
 * rates, event streams, registrations) refusing with 429 and counting the refusal.
 */
import { newAgentKey } from '@flotilla/api';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import {
  DEFAULT_REST_LIMITS,
  buildApp,
  createHubMetrics,
  createLogger,
  kruiseSpecValidator,
  type Db,
  type RestLimits,
} from '@flotilla/hub';
import { call, cloneSetSpec, insertToken, migratedDatabase, type HubDb } from './fixtures.js';
import { metricValue } from './fleet.js';

type Role = 'admin' | 'operator' | 'viewer' | 'bootstrap';

interface Hub {
  app: FastifyInstance;
  registry: Registry;
}

async function hubApp(db: Db, limits: Partial<RestLimits> = {}, logSink?: Writable): Promise<Hub> {
  const registry = new Registry();
  const app = await buildApp({
    db,
    logger: createLogger(logSink ? 'info' : 'silent', logSink),
    metrics: createHubMetrics(registry, false),
    validate: kruiseSpecValidator,
    ready: () => Promise.resolve(true),
    options: {
      bodyLimitBytes: 1024 * 1024,
      heartbeatTimeoutMs: 30_000,
      natsPublicUrls: ['nats://127.0.0.1:4222'],
      limits: { ...DEFAULT_REST_LIMITS, ...limits },
    },
  });
  return { app, registry };
}

let hub: HubDb;
let t: Hub;
const tokens: Record<Role, string> = { admin: '', operator: '', viewer: '', bootstrap: '' };
let seq = 0;

async function newToken(role: Role): Promise<string> {
  return insertToken(hub.pool, `hardening-${role}-${++seq}`, role);
}

beforeAll(async () => {
  hub = await migratedDatabase('flotilla_hub_hardening');
  for (const role of ['admin', 'operator', 'viewer', 'bootstrap'] as const) tokens[role] = await newToken(role);
  t = await hubApp(hub.db);
});

afterAll(async () => {
  await t?.app.close();
  await hub?.close();
});

interface ErrorBody {
  error: { code: string; message: string; details?: { path: string; message: string }[] };
}
const paths = (body: ErrorBody): string[] => (body.error.details ?? []).map((d) => d.path);

/** The probe's workload: privileged, hostPID, hostNetwork and the node's / mounted, in kube-system. */
function probeCloneSet(name: string): Record<string, unknown> {
  const spec = cloneSetSpec(1, 'registry.local/root:v1') as { template: { spec: Record<string, unknown> } };
  spec.template.spec = {
    hostPID: true,
    hostNetwork: true,
    containers: [
      {
        name: 'main',
        image: 'registry.local/root:v1',
        securityContext: { privileged: true },
        volumeMounts: [{ name: 'host', mountPath: '/host' }],
      },
    ],
    volumes: [{ name: 'host', hostPath: { path: '/' } }],
  };
  return { kind: 'CloneSet', name, namespace: 'kube-system', spec, placement: { clusterSelector: {} } };
}

async function desiredCount(name: string): Promise<number> {
  const res = await hub.pool.query('select count(*)::int as n from desired_objects where name = $1', [name]);
  return (res.rows[0] as { n: number }).n;
}

describe('workload admission policy', () => {
  const exception = {
    match: { namespace: 'kube-system', kind: 'CloneSet', name: 'node-agent' },
    allow: ['systemNamespaces', 'privileged', 'hostNamespaces', 'hostPathVolumes'],
    reason: 'the node agent needs the host',
  };

  it("refuses the probe's privileged CloneSet in kube-system, naming every field and control", async () => {
    const res = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, probeCloneSet('node-agent'));
    expect(res.statusCode, res.body).toBe(403);
    const body = res.json<ErrorBody>();
    expect(body.error.code).toBe('HUB_ERR_POLICY_DENIED');
    expect(paths(body)).toEqual([
      'namespace',
      'spec.template.spec.hostNetwork',
      'spec.template.spec.hostPID',
      'spec.template.spec.containers[0].securityContext.privileged',
      'spec.template.spec.volumes[0].hostPath',
    ]);
    expect(body.error.details![3]!.message).toContain('Pod Security Standards baseline: Privileged Containers');
    expect(await desiredCount('node-agent')).toBe(0);
    expect(await metricValue(t.registry, 'flotilla_hub_refusals_total', { reason: 'workload_policy' })).toBe(1);
  });

  it('lets only admins manage exceptions; viewers may read them', async () => {
    const byOperator = await call(
      t.app,
      'PUT',
      '/api/v1/policies/workloads/exceptions/node-agent',
      tokens.operator,
      exception,
    );
    expect(byOperator.statusCode).toBe(403);
    expect(byOperator.json<ErrorBody>().error.code).toBe('HUB_ERR_FORBIDDEN');
    const bad = await call(t.app, 'PUT', '/api/v1/policies/workloads/exceptions/bad', tokens.admin, {
      ...exception,
      match: { name: 'x' },
    });
    expect(bad.statusCode).toBe(400);
    expect(paths(bad.json<ErrorBody>())).toEqual(['match.kind', 'match.namespace']);
    const unknownControl = await call(t.app, 'PUT', '/api/v1/policies/workloads/exceptions/bad', tokens.admin, {
      ...exception,
      allow: ['everything'],
    });
    expect(unknownControl.statusCode).toBe(400);
    const list = await call(t.app, 'GET', '/api/v1/policies/workloads/exceptions', tokens.viewer);
    expect(list.json()).toEqual({ items: [] });
    const policy = await call(t.app, 'GET', '/api/v1/policies/workloads', tokens.viewer);
    expect(policy.json()).toMatchObject({
      level: 'baseline',
      systemNamespaces: expect.arrayContaining(['kube-system']),
    });
  });

  it('admits the workload once an admin allowed it, audited, and refuses it again once removed', async () => {
    const put = await call(t.app, 'PUT', '/api/v1/policies/workloads/exceptions/node-agent', tokens.admin, exception);
    expect(put.statusCode, put.body).toBe(201);
    const created = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, probeCloneSet('node-agent'));
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json<{ id: string }>().id;

    // An override adding a control the exception does not lift is named in that override.
    const body = probeCloneSet('node-agent');
    const update = {
      spec: body.spec,
      placement: body.placement,
      overrides: {
        c9: { template: { spec: { securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }] } } } },
      },
    };
    const widened = await call(t.app, 'PUT', `/api/v1/workloads/${id}`, tokens.operator, update);
    expect(widened.statusCode).toBe(403);
    expect(paths(widened.json<ErrorBody>())).toEqual(['overrides.c9.template.spec.securityContext.sysctls[0].name']);

    expect(
      (await call(t.app, 'DELETE', '/api/v1/policies/workloads/exceptions/node-agent', tokens.admin)).statusCode,
    ).toBe(204);
    const again = await call(t.app, 'PUT', `/api/v1/workloads/${id}`, tokens.operator, { ...update, overrides: {} });
    expect(again.statusCode).toBe(403);

    const audit = await call(t.app, 'GET', '/api/v1/audit?limit=50', tokens.admin);
    const actions = audit.json<{ items: { action: string; targetId: string }[] }>().items.map((a) => a.action);
    expect(actions).toEqual(expect.arrayContaining(['policy.exception.create', 'policy.exception.delete']));
  });

  it('checks a rollout target against the policy as it stands', async () => {
    const spec = cloneSetSpec();
    const created = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, {
      kind: 'CloneSet',
      name: 'edge-proxy',
      namespace: 'apps',
      spec,
      placement: { clusterSelector: {} },
      updatePolicy: 'Rollout',
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json<{ id: string }>().id;
    const allow = { match: { namespace: 'apps' }, allow: ['hostPorts'], reason: 'edge proxies bind host ports' };
    expect(
      (await call(t.app, 'PUT', '/api/v1/policies/workloads/exceptions/apps-ports', tokens.admin, allow)).statusCode,
    ).toBe(201);
    const withPort = structuredClone(spec) as { template: { spec: { containers: Record<string, unknown>[] } } };
    withPort.template.spec.containers[0]!.ports = [{ containerPort: 443, hostPort: 443 }];
    const rev2 = await call(t.app, 'PUT', `/api/v1/workloads/${id}`, tokens.operator, {
      spec: withPort,
      placement: { clusterSelector: {} },
    });
    expect(rev2.statusCode, rev2.body).toBe(200);
    await call(t.app, 'DELETE', '/api/v1/policies/workloads/exceptions/apps-ports', tokens.admin);
    const rollout = await call(t.app, 'POST', `/api/v1/workloads/${id}/rollouts`, tokens.operator, {
      revision: 2,
      strategy: { waves: [{ name: 'all' }] },
    });
    expect(rollout.statusCode, rollout.body).toBe(403);
    expect(paths(rollout.json<ErrorBody>())).toEqual(['spec.template.spec.containers[0].ports[0].hostPort']);
  });

  it('keeps SidecarSets out of the system namespaces', async () => {
    const res = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, {
      kind: 'SidecarSet',
      name: 'log-shipper',
      spec: {
        selector: { matchLabels: { app: 'web' } },
        containers: [{ name: 'ship', image: 'registry.local/ship:1' }],
      },
      placement: { clusterSelector: {} },
    });
    expect(res.statusCode).toBe(403);
    expect(paths(res.json<ErrorBody>())).toEqual(['spec.namespace']);
  });
});

describe('authentication comes before body validation', () => {
  const badBody = { kind: 'CloneSet', name: 'x', surprise: true, spec: 'not an object' };

  it('tells an anonymous caller nothing about the body', async () => {
    const res = await call(t.app, 'POST', '/api/v1/workloads', undefined, badBody);
    expect(res.statusCode).toBe(401);
    expect(res.json<ErrorBody>().error.details).toBeUndefined();
    expect(res.body).not.toContain('surprise');
  });

  it('refuses a token without the role before validating', async () => {
    const res = await call(t.app, 'POST', '/api/v1/workloads', tokens.viewer, badBody);
    expect(res.statusCode).toBe(403);
    expect(res.json<ErrorBody>().error.details).toBeUndefined();
  });
});

describe('no 500s from hostile input', () => {
  let workloadId = '';

  beforeAll(async () => {
    const res = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, {
      kind: 'CloneSet',
      name: 'bounds',
      namespace: 'apps',
      spec: cloneSetSpec(),
      placement: { clusterSelector: {} },
      updatePolicy: 'Rollout',
    });
    expect(res.statusCode, res.body).toBe(201);
    workloadId = res.json<{ id: string }>().id;
  });

  it.each(['2147483648', '1e20', '99999999999999999999999'])('answers 400 for revision %s in a path', async (rev) => {
    const res = await call(t.app, 'GET', `/api/v1/workloads/${workloadId}/revisions/${rev}`, tokens.viewer);
    expect(res.statusCode, res.body).toBe(400);
    expect(paths(res.json<ErrorBody>())).toEqual(['params.revision']);
  });

  it.each([2 ** 31, 1e20])('answers 400 for revision %d in a rollout request', async (revision) => {
    const res = await call(t.app, 'POST', `/api/v1/workloads/${workloadId}/rollouts`, tokens.operator, {
      revision,
      strategy: { waves: [{ name: 'all' }] },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(paths(res.json<ErrorBody>())).toEqual(['revision']);
  });

  const token = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
  it.each<[string, () => string, unknown]>([
    ['audit', () => '/api/v1/audit', ['1 or 1=1']],
    ['audit', () => '/api/v1/audit', [1e20]],
    ['revisions', () => `/api/v1/workloads/${workloadId}/revisions`, ['abc']],
    ['revisions', () => `/api/v1/workloads/${workloadId}/revisions`, [2 ** 31]],
    ['rollouts', () => `/api/v1/workloads/${workloadId}/rollouts`, ['yesterday', 'x']],
    ['rollouts', () => `/api/v1/workloads/${workloadId}/rollouts`, ['2026-01-01T00:00:00.000Z', 'not-a-uuid']],
    ['clusters', () => '/api/v1/clusters', ['a\u0000b']],
    ['workloads', () => '/api/v1/workloads', [{}, 1, null]],
  ])('answers 400 for a crafted continue token on %s (%j)', async (_what, url, key) => {
    const res = await call(t.app, 'GET', `${url()}?continue=${token(key)}`, tokens.admin);
    expect(res.statusCode, res.body).toBe(400);
    expect(paths(res.json<ErrorBody>())).toEqual(['continue']);
  });

  it('answers 400 for a Last-Event-ID that is not an event id', async () => {
    await call(t.app, 'POST', '/api/v1/clusters/register', tokens.bootstrap, {
      name: 'bounds-c1',
      publicKey: newAgentKey().publicKey,
    });
    await call(t.app, 'POST', '/api/v1/clusters/bounds-c1/accept', tokens.operator);
    const r = await call(t.app, 'POST', `/api/v1/workloads/${workloadId}/rollouts`, tokens.operator, {
      strategy: { waves: [{ name: 'all' }] },
    });
    expect(r.statusCode, r.body).toBe(201);
    const events = (lastEventId: string): Promise<{ statusCode: number; body: string }> =>
      t.app.inject({
        method: 'GET',
        url: `/api/v1/rollouts/${r.json<{ id: string }>().id}/events?follow=false`,
        headers: { authorization: `Bearer ${tokens.viewer}`, 'last-event-id': lastEventId },
      });
    for (const bad of ['1e20', '99999999999999999999', '-1', 'abc']) {
      const res = await events(bad);
      expect(res.statusCode, bad).toBe(400);
    }
    const ok = await events('0');
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('event: rollout');
  });

  it('answers 400 naming the field for a 10,000-deep override', async () => {
    // Written as text: JSON.stringify itself recurses too deep for this document.
    const deep = `${'{"a":'.repeat(10_000)}{"replicas":1}${'}'.repeat(10_000)}`;
    const payload = `{"spec":${JSON.stringify(cloneSetSpec())},"placement":{"clusterSelector":{}},"overrides":{"c1":${deep}}}`;
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/workloads/${workloadId}`,
      headers: { authorization: `Bearer ${tokens.operator}`, 'content-type': 'application/json' },
      payload,
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
    const details = res.json<ErrorBody>().error.details!;
    expect(details).toHaveLength(1);
    expect(details[0]!.path).toBe(`overrides.c1${'.a'.repeat(62)}`);
    expect(details[0]!.message).toBe('is nested deeper than 64 levels');
    expect(await metricValue(t.registry, 'flotilla_hub_refusals_total', { reason: 'json_depth' })).toBe(1);
  });

  it('answers 400 for NUL characters Postgres cannot store', async () => {
    const spec = cloneSetSpec() as { template: { spec: { containers: Record<string, unknown>[] } } };
    spec.template.spec.containers[0]!.env = [{ name: 'X', value: 'a\u0000b' }];
    const body = await call(t.app, 'PUT', `/api/v1/workloads/${workloadId}`, tokens.operator, {
      spec,
      placement: { clusterSelector: {} },
    });
    expect(body.statusCode).toBe(400);
    expect(paths(body.json<ErrorBody>())).toEqual(['spec.template.spec.containers[0].env[0].value']);
    const query = await call(t.app, 'GET', '/api/v1/workloads?namespace=%00', tokens.viewer);
    expect(query.statusCode).toBe(400);
    const token = await call(t.app, 'POST', '/api/v1/tokens', tokens.admin, { name: 'a\u0000', role: 'viewer' });
    expect(token.statusCode).toBe(400);
  });
});

describe('claiming credentials', () => {
  it('answers an unknown name exactly like a wrong secret', async () => {
    const reg = await call(t.app, 'POST', '/api/v1/clusters/register', tokens.bootstrap, {
      name: 'oracle-a',
      publicKey: newAgentKey().publicKey,
    });
    expect(reg.statusCode, reg.body).toBe(201);
    const wrongSecret = await call(t.app, 'POST', '/api/v1/clusters/oracle-a/claim', tokens.bootstrap, {
      registrationSecret: 'flreg_wrong',
    });
    const unknown = await call(t.app, 'POST', '/api/v1/clusters/no-such-cluster/claim', tokens.bootstrap, {
      registrationSecret: 'flreg_wrong',
    });
    expect(wrongSecret.statusCode).toBe(403);
    expect(unknown.statusCode).toBe(wrongSecret.statusCode);
    expect(unknown.body).toBe(wrongSecret.body);
  });
});

describe('labels', () => {
  it('validates cluster labels as Kubernetes does, naming the label', async () => {
    const longKey = await call(t.app, 'POST', '/api/v1/clusters/register', tokens.bootstrap, {
      name: 'label-a',
      publicKey: newAgentKey().publicKey,
      labels: { ['k'.repeat(317)]: 'v' },
    });
    expect(longKey.statusCode).toBe(400);
    expect(paths(longKey.json<ErrorBody>())).toEqual(['labels']);
    expect(longKey.json<ErrorBody>().error.details![0]!.message).toContain('must be no more than 63 characters');

    const reg = await call(t.app, 'POST', '/api/v1/clusters/register', tokens.bootstrap, {
      name: 'label-a',
      publicKey: newAgentKey().publicKey,
      labels: { env: 'prod' },
    });
    expect(reg.statusCode).toBe(201);
    const markup = await call(t.app, 'PUT', '/api/v1/clusters/label-a/labels', tokens.operator, {
      labels: { env: 'line\nbreak', tier: '<b>db</b>' },
    });
    expect(markup.statusCode).toBe(400);
    expect(paths(markup.json<ErrorBody>())).toEqual(['labels[env]', 'labels[tier]']);
  });

  it('validates the keys of a placement selector', async () => {
    const res = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, {
      kind: 'CloneSet',
      name: 'selector-keys',
      namespace: 'apps',
      spec: cloneSetSpec(),
      placement: { clusterSelector: { matchLabels: { 'bad key': 'x' } } },
    });
    expect(res.statusCode).toBe(400);
    expect(paths(res.json<ErrorBody>())).toEqual(['placement.clusterSelector.matchLabels']);
  });
});

describe('request logs', () => {
  it('never carry a query value such as ?token=', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logged = await hubApp(hub.db, {}, sink);
    try {
      const secret = 'flt_query-secret-value';
      const res = await logged.app.inject({ method: 'GET', url: `/api/v1/clusters?token=${secret}&limit=5` });
      expect(res.statusCode).toBe(401);
      const out = lines.join('');
      expect(out).toContain('/api/v1/clusters?token=[redacted]&limit=[redacted]');
      expect(out).not.toContain(secret);
    } finally {
      await logged.app.close();
    }
  });
});

describe('limits', () => {
  it('limits each token to its request rate with 429 and Retry-After, other tokens unaffected', async () => {
    // A refill this slow never adds a token within the test, however slow the machine.
    const limited = await hubApp(hub.db, { requestsPerSecond: 0.001, requestBurst: 3 });
    try {
      const mine = await newToken('viewer');
      const other = await newToken('viewer');
      const codes: number[] = [];
      for (let i = 0; i < 4; i++) codes.push((await call(limited.app, 'GET', '/api/v1/clusters', mine)).statusCode);
      expect(codes).toEqual([200, 200, 200, 429]);
      const refused = await call(limited.app, 'GET', '/api/v1/clusters', mine);
      expect(refused.statusCode).toBe(429);
      expect(refused.json<ErrorBody>().error.code).toBe('HUB_ERR_TOO_MANY_REQUESTS');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await call(limited.app, 'GET', '/api/v1/clusters', other)).statusCode).toBe(200);
      expect(await metricValue(limited.registry, 'flotilla_hub_refusals_total', { reason: 'rate_limit' })).toBe(2);
    } finally {
      await limited.app.close();
    }
  });

  it('limits callers without a valid token by address', async () => {
    const limited = await hubApp(hub.db, { anonymousRequestsPerSecond: 0.001, anonymousRequestBurst: 2 });
    try {
      const codes: number[] = [];
      for (let i = 0; i < 3; i++)
        codes.push((await call(limited.app, 'GET', '/api/v1/clusters', 'flt_guess')).statusCode);
      expect(codes).toEqual([401, 401, 429]);
      expect((await call(limited.app, 'GET', '/api/v1/clusters', undefined)).statusCode).toBe(429);
      // A valid token from the same address is not locked out by the guessing.
      expect((await call(limited.app, 'GET', '/api/v1/clusters', tokens.viewer)).statusCode).toBe(200);
      expect(
        await metricValue(limited.registry, 'flotilla_hub_refusals_total', { reason: 'rate_limit_anonymous' }),
      ).toBe(2);
    } finally {
      await limited.app.close();
    }
  });

  it('limits event streams per token and in total', async () => {
    const limited = await hubApp(hub.db, { streamsPerToken: 1, streamsTotal: 2 });
    const url = await limited.app.listen({ host: '127.0.0.1', port: 0 });
    const opened: AbortController[] = [];
    try {
      await call(limited.app, 'POST', '/api/v1/clusters/register', tokens.bootstrap, {
        name: 'streamed-c1',
        publicKey: newAgentKey().publicKey,
      });
      await call(limited.app, 'POST', '/api/v1/clusters/streamed-c1/accept', tokens.operator);
      const w = await call(limited.app, 'POST', '/api/v1/workloads', tokens.operator, {
        kind: 'CloneSet',
        name: 'streamed',
        namespace: 'apps',
        spec: cloneSetSpec(),
        placement: { clusterSelector: {} },
        updatePolicy: 'Rollout',
      });
      const id = w.json<{ id: string }>().id;
      const r = await call(limited.app, 'POST', `/api/v1/workloads/${id}/rollouts`, tokens.operator, {
        strategy: { waves: [{ name: 'all' }] },
      });
      expect(r.statusCode, r.body).toBe(201);
      const rollout = r.json<{ id: string }>().id;
      const open = async (token: string): Promise<number> => {
        const abort = new AbortController();
        opened.push(abort);
        const res = await fetch(`${url}/api/v1/rollouts/${rollout}/events`, {
          headers: { authorization: `Bearer ${token}` },
          signal: abort.signal,
        });
        if (res.status !== 200) await res.text();
        return res.status;
      };
      const [a, b, c] = [await newToken('viewer'), await newToken('viewer'), await newToken('viewer')];
      expect(await open(a)).toBe(200);
      expect(await open(a)).toBe(429);
      expect(await open(b)).toBe(200);
      expect(await open(c)).toBe(429);
      expect(await metricValue(limited.registry, 'flotilla_hub_refusals_total', { reason: 'streams_per_token' })).toBe(
        1,
      );
      expect(await metricValue(limited.registry, 'flotilla_hub_refusals_total', { reason: 'streams_total' })).toBe(1);
      // Closing a stream gives its slot back (as soon as the server sees the socket close).
      for (const o of opened) o.abort();
      opened.length = 0;
      let status = 0;
      for (let i = 0; i < 400 && status !== 200; i++) {
        status = await open(c);
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(status).toBe(200);
    } finally {
      for (const o of opened) o.abort();
      await limited.app.close();
    }
  });

  it('limits registrations per bootstrap token per minute and pending clusters per token', async () => {
    const limited = await hubApp(hub.db, { registrationsPerMinute: 3, pendingClustersPerToken: 2 });
    try {
      const fast = await newToken('bootstrap');
      const fastCodes: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await call(limited.app, 'POST', '/api/v1/clusters/register', fast, {
          name: `burst-${i}`,
          publicKey: newAgentKey().publicKey,
        });
        fastCodes.push(res.statusCode);
        // Accept as we go, so only the per-minute limit can refuse.
        if (res.statusCode === 201)
          await call(limited.app, 'POST', `/api/v1/clusters/burst-${i}/accept`, tokens.operator);
      }
      expect(fastCodes).toEqual([201, 201, 201, 429]);
      expect(
        await metricValue(limited.registry, 'flotilla_hub_refusals_total', { reason: 'registrations_per_minute' }),
      ).toBe(1);

      const squatter = await newToken('bootstrap');
      const squatCodes: number[] = [];
      for (let i = 0; i < 3; i++) {
        squatCodes.push(
          (
            await call(limited.app, 'POST', '/api/v1/clusters/register', squatter, {
              name: `future-${i}`,
              publicKey: newAgentKey().publicKey,
            })
          ).statusCode,
        );
      }
      expect(squatCodes).toEqual([201, 201, 429]);
      expect(await metricValue(limited.registry, 'flotilla_hub_refusals_total', { reason: 'pending_per_token' })).toBe(
        1,
      );
    } finally {
      await limited.app.close();
    }
  });

  it('expires pending registrations: an expired one cannot be accepted or claimed, and may register again', async () => {
    const reg = await call(t.app, 'POST', '/api/v1/clusters/register', tokens.bootstrap, {
      name: 'stale-1',
      publicKey: newAgentKey().publicKey,
    });
    expect(reg.statusCode).toBe(201);
    const secret = reg.json<{ registrationSecret: string }>().registrationSecret;
    await hub.pool.query(`update clusters set registered_at = now() - interval '2 days' where name = 'stale-1'`);
    expect((await call(t.app, 'POST', '/api/v1/clusters/stale-1/accept', tokens.operator)).statusCode).toBe(404);
    const claim = await call(t.app, 'POST', '/api/v1/clusters/stale-1/claim', tokens.bootstrap, {
      registrationSecret: secret,
    });
    expect(claim.statusCode).toBe(403);
    const again = await call(t.app, 'POST', '/api/v1/clusters/register', tokens.bootstrap, {
      name: 'stale-1',
      publicKey: newAgentKey().publicKey,
    });
    expect(again.statusCode, again.body).toBe(201);
    const audit = await hub.pool.query(
      `select count(*)::int as n from audit_log where action = 'cluster.registration.expire' and target_id = 'stale-1'`,
    );
    expect((audit.rows[0] as { n: number }).n).toBe(1);
  });
});
