/**
 * The seeded CI subset of the REST fuzz (test/bench/fuzz; the full run is `npm run bench:fuzz --
 * --target=rest`): a real hub on a fresh database with its own nats-server, requests derived
 * from the OpenAPI document it serves. Plus the regression of what the fuzz found in the
 * rendering of manifests: a cluster named like an Object.prototype member.
 */
import { newAgentKey } from '@flotilla/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRestFuzz, type RestFuzz } from '../../bench/fuzz/rest/target.js';

let fuzz: RestFuzz;

beforeAll(async () => {
  fuzz = await startRestFuzz();
});

afterAll(async () => {
  await fuzz?.stop();
});

async function call(
  method: 'GET' | 'POST',
  url: string,
  token: string,
  body?: object,
): Promise<{ status: number; json: unknown }> {
  const res = await fuzz.fuzz.hub.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(body ? { payload: body } : {}),
  });
  return { status: res.statusCode, json: res.body === '' ? undefined : res.json() };
}

describe('REST API fuzz, seeded subset', () => {
  it('a cluster named "constructor" gets the template spec, not Object.prototype.constructor', async () => {
    const { tokens } = fuzz.fuzz;
    const reg = await call('POST', '/api/v1/clusters/register', tokens.bootstrap, {
      name: 'constructor',
      publicKey: newAgentKey().publicKey,
    });
    expect(reg.status).toBe(201);
    expect((await call('POST', '/api/v1/clusters/constructor/accept', tokens.operator)).status).toBe(200);
    const spec = {
      replicas: 2,
      selector: { matchLabels: { app: 'proto' } },
      template: { metadata: { labels: { app: 'proto' } }, spec: { containers: [{ name: 'main', image: 'app:v1' }] } },
    };
    const created = await call('POST', '/api/v1/workloads', tokens.operator, {
      kind: 'CloneSet',
      name: 'proto',
      namespace: 'default',
      spec,
      placement: { clusterSelector: {} },
    });
    expect(created.status).toBe(201);
    const row = await fuzz.fuzz.hub.pool.query<{ manifest: { spec?: unknown } }>(
      `select manifest from desired_objects where cluster_name = 'constructor' and name = 'proto'`,
    );
    expect(row.rows[0]?.manifest.spec).toEqual(spec);
  });

  it('router errors come in the error envelope and never echo the URL', async () => {
    const { tokens } = fuzz.fuzz;
    const bad = await fuzz.fuzz.hub.app.inject({ method: 'GET', url: `/api/v1/workloads/%zz?token=${tokens.admin}` });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      error: {
        code: 'HUB_ERR_INVALID',
        message: 'the URL is not valid',
        details: [{ path: 'url', message: 'a path segment is not valid percent-encoding' }],
      },
    });
    const long = await fuzz.fuzz.hub.app.inject({ method: 'GET', url: `/api/v1/clusters/${'x'.repeat(300)}` });
    expect(long.statusCode).toBe(414);
    expect(long.json()).toMatchObject({ error: { code: 'HUB_ERR_INVALID', message: 'the URL is not valid' } });
    expect(long.body).not.toContain('xxxxxxxxxx');
  });

  it('a __proto__ key in a JSON body is refused naming the field', async () => {
    const res = await fuzz.fuzz.hub.app.inject({
      method: 'POST',
      url: '/api/v1/tokens',
      headers: { authorization: `Bearer ${fuzz.fuzz.tokens.admin}`, 'content-type': 'application/json' },
      payload: '{"name":"x","role":{"__proto__":{"polluted":true}}}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: {
        code: 'HUB_ERR_INVALID',
        message: 'the request is invalid',
        details: [{ path: 'role.__proto__', message: 'a key named __proto__ is not accepted' }],
      },
    });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it.each(['Infinity', '1e999', '-Infinity'])('revision %s in the path is a 400 naming it, not a 500', async (rev) => {
    const res = await fuzz.fuzz.hub.app.inject({
      method: 'GET',
      url: `/api/v1/workloads/${fuzz.pool.pick('workloads', 0)}/revisions/${rev}`,
      headers: { authorization: `Bearer ${fuzz.fuzz.tokens.viewer}` },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { details: [{ path: 'params.revision' }] } });
  });

  it('300 fuzzed requests over every route: no 5xx or crash, error envelopes, auth first, no secret echoed', async () => {
    const findings = await fuzz.run({ runs: 300, seed: 20261127 });
    expect(findings.inputs).toBe(300);
    expect(findings.list()).toEqual([]);
    // The subset reaches the routes, not only their refusals.
    expect(findings.counters.get('status 200') ?? 0).toBeGreaterThan(30);
  });
});
