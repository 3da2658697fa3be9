import { describe, expect, it } from 'vitest';
import type { Fetch } from './client.js';
import { runCli, type CliDeps } from './run.js';

interface Call {
  url: string;
  method: string;
  body?: unknown;
  authorization: string | undefined;
  lastEventId: string | undefined;
}

/** Answers requests from a list of handlers in order and records what was asked. */
function hub(answers: ((call: Call) => Response)[]): { fetch: Fetch; calls: Call[] } {
  const calls: Call[] = [];
  const fetch: Fetch = (url, init) => {
    const headers = (init?.headers ?? {}) as Record<string, string>;
    const call = {
      url,
      method: init?.method ?? 'GET',
      ...(typeof init?.body === 'string' ? { body: JSON.parse(init.body) as unknown } : {}),
      authorization: headers['authorization'],
      lastEventId: headers['last-event-id'],
    };
    calls.push(call);
    const next = answers.shift();
    if (!next) return Promise.reject(new Error(`unexpected request ${call.method} ${url}`));
    return Promise.resolve(next(call));
  };
  return { fetch, calls };
}

const json = (body: unknown, status = 200): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

async function run(
  argv: string[],
  deps: Partial<CliDeps> & { fetch: Fetch },
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    env: { hubUrl: 'https://hub.test', token: 'flt_env' },
    stdout: (s) => (out += s),
    stderr: (s) => (err += s),
    readFile: (p) => (p === '/token' ? Promise.resolve(' flt_file\n') : Promise.reject(new Error(`ENOENT: ${p}`))),
    sleep: () => Promise.resolve(),
    ...deps,
  });
  return { code, out, err };
}

describe('configuration', () => {
  it('takes the hub and token from the environment, and flags over it', async () => {
    const h = hub([() => json({ items: [] }), () => json({ items: [] }), () => json({ items: [] })]);
    expect((await run(['tokens', 'list'], h)).code).toBe(0);
    expect((await run(['tokens', 'list', '--token', 'flt_flag', '--hub-url', 'https://other:9/'], h)).code).toBe(0);
    expect((await run(['tokens', 'list', '--token-file', '/token'], h)).code).toBe(0);
    expect(h.calls.map((c) => [c.url, c.authorization])).toEqual([
      ['https://hub.test/api/v1/tokens', 'Bearer flt_env'],
      ['https://other:9/api/v1/tokens', 'Bearer flt_flag'],
      ['https://hub.test/api/v1/tokens', 'Bearer flt_file'],
    ]);
  });

  it('refuses conflicting or broken settings before any request', async () => {
    const h = hub([]);
    const both = await run(['tokens', 'list', '--token', 'a', '--token-file', '/token'], h);
    expect([both.code, both.err]).toEqual([2, 'error: give --token or --token-file, not both\n']);
    const url = await run(['tokens', 'list', '--hub-url', 'ftp://x'], h);
    expect(url.code).toBe(2);
    expect(url.err).toContain('--hub-url must be http:// or https://');
    const file = await run(['tokens', 'list', '--token-file', '/nope'], h);
    expect(file.code).toBe(1);
    expect(file.err).toContain('cannot read --token-file /nope');
    expect(h.calls).toEqual([]);
  });

  it('verifies the hub with --ca-file or FLOTILLA_CA_FILE, and skips that only with --insecure', async () => {
    const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const asked: unknown[] = [];
    const h = hub([() => json({ items: [] }), () => json({ items: [] }), () => json({ items: [] })]);
    const tlsFetch: CliDeps['tlsFetch'] = (tls) => {
      asked.push(tls);
      return h.fetch;
    };
    const readFile = (p: string): Promise<string> => (p === '/ca.crt' ? Promise.resolve(CA) : Promise.resolve('x'));
    expect((await run(['tokens', 'list', '--ca-file', '/ca.crt'], { fetch: h.fetch, tlsFetch, readFile })).code).toBe(
      0,
    );
    const fromEnv = { hubUrl: 'https://hub.test', token: 't', caFile: '/ca.crt' };
    expect((await run(['tokens', 'list'], { fetch: h.fetch, tlsFetch, readFile, env: fromEnv })).code).toBe(0);
    const plain = ['tokens', 'list', '--hub-url', 'http://hub.example', '--insecure'];
    expect((await run(plain, { fetch: h.fetch, tlsFetch })).code).toBe(0);
    expect(asked).toEqual([
      { caPem: CA, insecure: false },
      { caPem: CA, insecure: false },
      { caPem: undefined, insecure: true },
    ]);
    const refused = await run(['tokens', 'list', '--hub-url', 'http://hub.example'], { fetch: h.fetch, tlsFetch });
    expect([refused.code, refused.err]).toEqual([
      2,
      'error: --hub-url must be https:// for hub.example (or give --insecure)\n',
    ]);
    const notPem = await run(['tokens', 'list', '--ca-file', '/other'], { fetch: h.fetch, tlsFetch, readFile });
    expect(notPem.err).toBe('error: --ca-file /other holds no PEM certificate\n');
  });

  it('prints the API error with its fields and never the token', async () => {
    const h = hub([
      () =>
        json(
          {
            error: {
              code: 'HUB_ERR_INVALID',
              message: 'the request is invalid',
              details: [{ path: 'labels.env', message: 'must NOT have more than 63 characters' }],
            },
          },
          400,
        ),
      () => new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }),
    ]);
    const bad = await run(['tokens', 'list', '--token', 'flt_secret'], h);
    expect(bad.code).toBe(1);
    expect(bad.err).toBe(
      'error: 400 HUB_ERR_INVALID: the request is invalid\n  labels.env: must NOT have more than 63 characters\n',
    );
    const proxy = await run(['tokens', 'list', '--token', 'flt_secret'], h);
    expect(proxy.err).toBe('error: 502 HTTP_ERROR: Bad Gateway\n');
    expect(bad.out + bad.err + proxy.out + proxy.err).not.toContain('flt_secret');
  });
});

describe('rollouts watch', () => {
  const event = (id: number, phase: string): string =>
    `id: ${id}\nevent: rollout\ndata: ${JSON.stringify({ id: String(id), rolloutId: 'r1', at: `2026-01-01T00:00:0${id}.000Z`, level: 'info', message: `m${id}`, wave: 'canary', cluster: id === 2 ? 'c1' : null, phase })}\n\n`;
  const sse = (body: string): Response => new Response(body, { headers: { 'content-type': 'text/event-stream' } });

  it('reconnects from the last event id when the stream ends early, and exits by the final phase', async () => {
    const h = hub([
      () => sse(event(1, 'Progressing') + ': keepalive\n\n'),
      () => json({ id: 'r1', phase: 'Progressing', message: '' }),
      () => sse(event(2, 'Progressing') + event(3, 'Succeeded')),
      () => json({ id: 'r1', phase: 'Succeeded', message: 'done' }),
    ]);
    const ok = await run(['rollouts', 'watch', 'r1'], h);
    expect(ok.code).toBe(0);
    expect(h.calls.map((c) => c.lastEventId)).toEqual([undefined, undefined, '1', undefined]);
    expect(ok.out.trim().split('\n')).toEqual([
      '2026-01-01T00:00:01.000Z  info   canary  Progressing  m1',
      '2026-01-01T00:00:02.000Z  info   canary/c1  Progressing  m2',
      '2026-01-01T00:00:03.000Z  info   canary  Succeeded  m3',
    ]);
    expect(ok.err).toBe('rollout r1 Succeeded: done\n');
  });

  it('rollback --watch starts the new rollout, then follows it to its end', async () => {
    const back = { id: 'r2', phase: 'Progressing', message: '', targetRevision: 1 };
    const h = hub([
      () => json(back, 201),
      () => sse(event(1, 'Failed')),
      () => json({ ...back, phase: 'Failed', message: 'canary unhealthy' }),
    ]);
    const res = await run(['rollouts', 'rollback', 'r1', '--watch'], h);
    expect(h.calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      'POST https://hub.test/api/v1/rollouts/r1/rollback',
      'GET https://hub.test/api/v1/rollouts/r2/events',
      'GET https://hub.test/api/v1/rollouts/r2',
    ]);
    expect(res.out).toBe(
      'rollout r2 started: rollback to revision 1\n2026-01-01T00:00:01.000Z  info   canary  Failed  m1\n',
    );
    expect(res.err).toBe('rollout r2 Failed: canary unhealthy\n');
    expect(res.code).toBe(1);
    // Without --watch it returns as soon as the rollout is started.
    const once = await run(['rollouts', 'rollback', 'r1'], hub([() => json(back, 201)]));
    expect(once.code).toBe(0);
  });

  it('start --dry-run asks for the preview and prints it; nothing is started', async () => {
    const id = '0b5f6a2e-6a53-4c36-9a0e-0c7e1f5d3a11';
    const preview = { workloadId: id, previousRevision: 1, targetRevision: 2, waves: [], clusters: [] };
    const h = hub([() => json({ id, name: 'web' }), () => json(preview)]);
    const res = await run(['rollouts', 'start', id, '--canary', 'c1', '--dry-run', '-o', 'json'], h);
    expect(res.code).toBe(0);
    expect(h.calls[1]).toMatchObject({
      method: 'POST',
      url: `https://hub.test/api/v1/workloads/${id}/rollouts`,
      body: { dryRun: true },
    });
    expect(JSON.parse(res.out)).toEqual(preview);
  });

  it('rollback --dry-run asks for the rollback preview and starts nothing', async () => {
    const preview = { workloadId: 'w', previousRevision: 2, targetRevision: 1, waves: [], clusters: [] };
    const h = hub([() => json(preview)]);
    const res = await run(['rollouts', 'rollback', 'r1', '--dry-run', '-o', 'json'], h);
    expect(res.code).toBe(0);
    expect(h.calls).toMatchObject([
      { method: 'POST', url: 'https://hub.test/api/v1/rollouts/r1/rollback', body: { dryRun: true } },
    ]);
    expect(JSON.parse(res.out)).toEqual(preview);
  });

  it('clusters windows sets the windows (CRON|DURATION|ZONE), "none" clears them, a bad one is a usage error', async () => {
    const cluster = { name: 'c1', maintenanceWindows: [{ cron: '0 2 * * SAT', duration: '4h', timeZone: 'UTC' }] };
    const h = hub([() => json(cluster), () => json({ ...cluster, maintenanceWindows: [] })]);
    const set = await run(['clusters', 'windows', 'c1', '0 2 * * SAT|4h|UTC'], h);
    expect(set.code).toBe(0);
    expect(set.err + set.out).toContain('0 2 * * SAT|4h|UTC');
    expect(await run(['clusters', 'windows', 'c1', 'none'], h)).toMatchObject({ code: 0 });
    expect(h.calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['PUT', 'https://hub.test/api/v1/clusters/c1/maintenance-windows', { windows: cluster.maintenanceWindows }],
      ['PUT', 'https://hub.test/api/v1/clusters/c1/maintenance-windows', { windows: [] }],
    ]);
    const bad = await run(['clusters', 'windows', 'c1', '0 2 * * SAT'], hub([]));
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('must be CRON|DURATION|ZONE');
  });

  it('clusters prometheus sets the analysis Prometheus URL, "none" removes it', async () => {
    const cluster = { name: 'c1', prometheusUrl: 'http://prom.c1:9090', prometheusTokenRef: 'c1-token' };
    const h = hub([() => json(cluster), () => json({ ...cluster, prometheusUrl: null, prometheusTokenRef: null })]);
    const set = await run(['clusters', 'prometheus', 'c1', 'http://prom.c1:9090', '--token-ref', 'c1-token'], h);
    expect(set.code).toBe(0);
    expect(set.err + set.out).toContain('cluster c1 Prometheus: http://prom.c1:9090 (token c1-token)');
    expect(await run(['clusters', 'prometheus', 'c1', 'none'], h)).toMatchObject({ code: 0 });
    expect(h.calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['PUT', 'https://hub.test/api/v1/clusters/c1/prometheus', { url: 'http://prom.c1:9090', tokenRef: 'c1-token' }],
      ['PUT', 'https://hub.test/api/v1/clusters/c1/prometheus', { url: null }],
    ]);
  });

  it('clusters prometheus passes basic auth and a CA by reference', async () => {
    const cluster = {
      name: 'c1',
      prometheusUrl: 'https://prom.c1:9090',
      prometheusBasicAuth: { usernameRef: 'u', passwordRef: 'p' },
      prometheusCaRef: 'ca.pem',
    };
    const h = hub([() => json(cluster)]);
    const args = ['--username-ref', 'u', '--password-ref', 'p', '--ca-ref', 'ca.pem'];
    const set = await run(['clusters', 'prometheus', 'c1', 'https://prom.c1:9090', ...args], h);
    expect(set.code).toBe(0);
    expect(set.err + set.out).toContain('cluster c1 Prometheus: https://prom.c1:9090 (basic auth u/p, CA ca.pem)');
    expect(h.calls.map((c) => c.body)).toEqual([
      { url: 'https://prom.c1:9090', basicAuth: { usernameRef: 'u', passwordRef: 'p' }, caRef: 'ca.pem' },
    ]);
    const half = await run(['clusters', 'prometheus', 'c1', 'https://prom.c1:9090', '--username-ref', 'u'], h);
    expect(half.code).toBe(2);
    expect(half.err).toContain('give --username-ref and --password-ref together');
  });

  it('exits 1 when the rollout ends in any other terminal phase', async () => {
    const h = hub([() => sse(event(1, 'RolledBack')), () => json({ id: 'r1', phase: 'RolledBack', message: '' })]);
    const res = await run(['rollouts', 'watch', 'r1', '-o', 'json'], h);
    expect(res.code).toBe(1);
    expect(JSON.parse(res.out)).toMatchObject({ id: '1', phase: 'RolledBack' });
  });
});
