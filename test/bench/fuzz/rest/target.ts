/**
 * Fuzz target: the hub's REST API, schema-driven. Starts a real hub (fresh Postgres database,
 * its own nats-server), seeds a few clusters, workloads and a rollout so requests reach existing
 * objects, reads the routes from the hub's OpenAPI document and sends fuzzed requests through
 * `app.inject`, checking each answer (check.ts). A process-level error (an uncaught exception or
 * unhandled rejection while the hub works) is a crash; after the run the hub must still be
 * ready and answer an ordinary request.
 */
import type { FastifyInstance, InjectOptions } from 'fastify';
import { newAgentKey } from '@flotilla/api';
import { signedHeaders } from '../../../integration/hub/fleet.js';
import type { Findings } from '../lib/findings.js';
import { thrown, type Violation } from '../lib/findings.js';
import { stringify } from '../lib/json.js';
import { runAsync, type RunOptions } from '../lib/run.js';
import { checkAnswer, type Answer } from './check.js';
import { startFuzzHub, type FuzzHub } from '../lib/hub.js';
import { Pool } from './pool.js';
import { SECRET_OF_PATH_CLUSTER, requestArbitrary, type FuzzRequest } from './requests.js';
import { HIDDEN_ROUTES, collectionOf, routesFromOpenApi, type OpenApiDocument, type RouteSpec } from './routes.js';

/** No answer after this long is a hang (the hub must answer every request). */
const ANSWER_TIMEOUT_MS = 30_000;

export interface RestFuzz {
  fuzz: FuzzHub;
  routes: RouteSpec[];
  pool: Pool;
  run(opts: RunOptions): Promise<Findings>;
  stop(): Promise<void>;
}

class NoAnswer extends Error {
  override readonly name = 'NoAnswer';
}

async function send(app: FastifyInstance, opts: InjectOptions): Promise<Answer> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new NoAnswer(`no answer in ${ANSWER_TIMEOUT_MS} ms`)), ANSWER_TIMEOUT_MS);
  });
  try {
    const res = await Promise.race([app.inject(opts), timeout]);
    return { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), body: res.body };
  } finally {
    clearTimeout(timer);
  }
}

/** A request the seed needs to succeed. */
async function must(
  fuzz: FuzzHub,
  pool: Pool,
  method: 'POST' | 'PUT',
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const a = await send(fuzz.hub.app, {
    method,
    url,
    headers: {
      authorization: `Bearer ${url.endsWith('/register') || url.endsWith('/claim') ? fuzz.tokens.bootstrap : fuzz.tokens.admin}`,
      ...headers,
    },
    ...(body === undefined ? {} : { payload: body as object }),
  });
  if (a.status >= 300) throw new Error(`seeding: ${method} ${url}: ${a.status} ${a.body}`);
  const parsed: unknown = JSON.parse(a.body);
  pool.harvest(parsed);
  return parsed;
}

function spec(image: string): Record<string, unknown> {
  return {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image }] } },
  };
}

/** Clusters (one claimed, one accepted, one pending), workloads of every kind and a rollout. */
async function seed(fuzz: FuzzHub, pool: Pool): Promise<void> {
  for (const [name, env] of [
    ['c1', 'prod'],
    ['c2', 'prod'],
    ['c3', 'dev'],
  ] as const) {
    const key = newAgentKey();
    const reg = (await must(fuzz, pool, 'POST', '/api/v1/clusters/register', {
      name,
      labels: { env },
      publicKey: key.publicKey,
    })) as { registrationSecret: string };
    if (name === 'c3') continue;
    await must(fuzz, pool, 'POST', `/api/v1/clusters/${name}/accept`);
    if (name === 'c1') {
      const url = `/api/v1/clusters/${name}/claim`;
      const body = { registrationSecret: reg.registrationSecret };
      await must(fuzz, pool, 'POST', url, body, signedHeaders(key.seed, 'POST', url, body));
    }
  }
  const everywhere = { clusterSelector: {} };
  await must(fuzz, pool, 'POST', '/api/v1/workloads', {
    kind: 'CloneSet',
    name: 'web',
    namespace: 'default',
    spec: spec('app:v1'),
    placement: everywhere,
    overrides: { c2: { replicas: 3 } },
  });
  const rolled = (await must(fuzz, pool, 'POST', '/api/v1/workloads', {
    kind: 'CloneSet',
    name: 'api',
    namespace: 'default',
    spec: spec('api:v1'),
    placement: everywhere,
    updatePolicy: 'Rollout',
  })) as { id: string };
  await must(fuzz, pool, 'PUT', `/api/v1/workloads/${rolled.id}`, {
    spec: spec('api:v2'),
    placement: everywhere,
    updatePolicy: 'Rollout',
  });
  await must(fuzz, pool, 'POST', `/api/v1/workloads/${rolled.id}/rollouts`, {
    strategy: { waves: [{ name: 'canary', clusters: { names: ['c1'] } }, { name: 'rest' }], offlinePolicy: 'Skip' },
  });
  await must(fuzz, pool, 'POST', '/api/v1/workloads', {
    kind: 'SidecarSet',
    name: 'logger',
    spec: {
      namespace: 'default',
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'log', image: 'log:v1' }],
    },
    placement: everywhere,
  });
  // Workloads rolled out by rollouts, two revisions each and no rollout yet.
  for (const name of ['roll-a', 'roll-b']) {
    const w = (await must(fuzz, pool, 'POST', '/api/v1/workloads', {
      kind: 'CloneSet',
      name,
      namespace: 'default',
      spec: spec('r:v1'),
      placement: everywhere,
      updatePolicy: 'Rollout',
    })) as { id: string };
    await must(fuzz, pool, 'PUT', `/api/v1/workloads/${w.id}`, {
      spec: spec('r:v2'),
      placement: everywhere,
      updatePolicy: 'Rollout',
    });
  }
  await must(fuzz, pool, 'POST', '/api/v1/tokens', { name: 'spare', role: 'viewer' });
}

function authHeader(fuzz: FuzzHub, req: FuzzRequest): Record<string, string> {
  switch (req.auth) {
    case 'admin':
    case 'operator':
    case 'viewer':
    case 'bootstrap':
    case 'revoked':
      return { authorization: `Bearer ${fuzz.tokens[req.auth]}` };
    case 'unknown':
      return { authorization: 'Bearer flt_0000000000000000000000000000000000000000000' };
    case 'empty-bearer':
      return { authorization: 'Bearer ' };
    case 'basic':
      return { authorization: 'Basic YWRtaW46YWRtaW4=' };
    case 'two-words':
      return { authorization: `Bearer ${fuzz.tokens.admin} extra` };
    case 'none':
    case 'query-token':
      return {};
  }
}

/** URL-encodes text; a lone surrogate (not encodable) goes as the bytes of U+FFFD. */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return [...Buffer.from(text, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
  }
}

/** The URL of a request, with existing objects resolved from the pool. */
function urlOf(
  fuzz: FuzzHub,
  pool: Pool,
  req: FuzzRequest,
): { url: string; rerouted: boolean; cluster?: string; last?: string } {
  let cluster: string | undefined;
  let last: string | undefined;
  // A raw value that changes the path's shape may reach another route, or none.
  let rerouted = false;
  let i = 0;
  const path = req.route.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const v = req.path[i++]!;
    // Rollouts are started only on workloads whose updatePolicy is Rollout.
    const rollable = req.route.path.endsWith('/{id}/rollouts') && pool.size('rollout-workloads') > 0;
    const collection = rollable ? 'rollout-workloads' : collectionOf(req.route.path, name);
    let value: string;
    if (v.source === 'known') value = collection === 'ui' ? 'index.html' : (pool.pick(collection, v.pick) ?? 'missing');
    else value = v.value;
    if (collection === 'clusters') cluster = value;
    last = value;
    // `.` and `..` stay as they are when encoded, and the URL parser resolves them.
    if (v.source === 'value' && (value === '.' || value === '..')) rerouted = true;
    if (v.source !== 'value' || !v.raw) return encode(value);
    if (/[/?#%]/.test(value) || value === '') rerouted = true;
    return value;
  });
  const query = [...req.query];
  if (req.harvestedContinue !== undefined) {
    const token = pool.pick('continue', req.harvestedContinue);
    if (token) query.push(['continue', token]);
  }
  if (req.auth === 'query-token') query.push(['token', fuzz.tokens.admin]);
  const qs = query.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
  return {
    url: qs ? `${path}?${qs}` : path,
    rerouted,
    ...(cluster !== undefined ? { cluster } : {}),
    ...(last !== undefined ? { last } : {}),
  };
}

function payloadOf(pool: Pool, req: FuzzRequest, cluster: string | undefined): Partial<InjectOptions> {
  const b = req.body;
  if (b.kind === 'none') return {};
  if (b.kind === 'raw') {
    return { payload: b.text, headers: b.contentType === undefined ? {} : { 'content-type': b.contentType } };
  }
  let value = b.value;
  if (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<string, unknown>)['registrationSecret'] === SECRET_OF_PATH_CLUSTER
  ) {
    value = { registrationSecret: (cluster && pool.secrets.get(cluster)) ?? 'no-secret-known' };
  }
  return { payload: stringify(value), headers: { 'content-type': 'application/json' } };
}

export async function startRestFuzz(): Promise<RestFuzz> {
  const fuzz = await startFuzzHub();
  const crashes: Violation[] = [];
  const onCrash = (err: unknown): void => void crashes.push({ ...thrown('process', err), kind: 'crash' });
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  const pool = new Pool();
  const stop = async (): Promise<void> => {
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
    await fuzz.stop();
  };
  try {
    // The routes as the hub documents them (the document it serves).
    const doc = await send(fuzz.hub.app, { method: 'GET', url: '/api/v1/openapi.json' });
    const routes = [...routesFromOpenApi(JSON.parse(doc.body) as OpenApiDocument), ...HIDDEN_ROUTES];
    // The fuzzer's own tokens are listed by GET /tokens like any other: never revoke them.
    const own = await fuzz.hub.pool.query<{ id: string }>(`select id from api_tokens where name like 'fuzz-%'`);
    for (const { id } of own.rows) pool.protect(String(id));
    await seed(fuzz, pool);
    fuzz.takeErrors();

    const check = async (req: FuzzRequest, findings: Findings): Promise<Violation[]> => {
      try {
        return await checkOne(req, findings);
      } catch (err) {
        return [{ ...thrown(`harness ${req.route.path}`, err), kind: 'harness' }];
      }
    };
    const checkOne = async (req: FuzzRequest, findings: Findings): Promise<Violation[]> => {
      const { url, rerouted, cluster, last } = urlOf(fuzz, pool, req);
      const p = payloadOf(pool, req, cluster);
      const headers = { ...authHeader(fuzz, req), ...(p.headers as Record<string, string> | undefined) };
      let answer: Answer;
      const started = performance.now();
      try {
        answer = await send(fuzz.hub.app, {
          method: req.method ?? req.route.method,
          url,
          headers,
          ...(p.payload === undefined ? {} : { payload: p.payload }),
        });
      } catch (err) {
        const e = err as Error;
        // light-my-request refuses some URLs before they reach the hub (not the hub's doing).
        if (e instanceof NoAnswer) return [{ kind: 'no-answer', where: req.route.path, detail: url }];
        findings.count(`inject refused: ${e.message.slice(0, 60)}`);
        return [];
      }
      findings.count(`status ${answer.status}`);
      // A deleted object is no longer worth naming.
      if ((req.method ?? req.route.method) === 'DELETE' && answer.status < 300 && last !== undefined) pool.forget(last);
      if (performance.now() - started > 1000) findings.count(`slower than 1 s: ${req.route.method} ${req.route.path}`);
      findings.count(`${req.method ?? req.route.method} ${req.route.path} → ${answer.status}`);
      if (answer.status < 300 && answer.contentType.includes('json')) {
        try {
          pool.harvest(JSON.parse(answer.body));
        } catch {
          // checkAnswer reports it
        }
      }
      const errors = fuzz.takeErrors();
      const out = checkAnswer(req, answer, { secrets: fuzz.secrets, errors, rerouted });
      // Errors the hub logged without failing the request: its background work (relay, scheduler).
      if (answer.status < 500) {
        for (const l of errors)
          out.push({ kind: 'error-log', where: l.msg ?? '', detail: stringify(l).slice(0, 2000) });
      }
      return [...out, ...crashes.splice(0)];
    };

    return {
      fuzz,
      routes,
      pool,
      async run(opts) {
        const findings = await runAsync({ arbitrary: requestArbitrary(routes), check }, opts);
        const after = await Promise.all([
          send(fuzz.hub.app, { method: 'GET', url: '/readyz' }),
          send(fuzz.hub.app, {
            method: 'GET',
            url: '/api/v1/workloads',
            headers: { authorization: `Bearer ${fuzz.tokens.admin}` },
          }),
        ]);
        if (after.some((a) => a.status !== 200)) {
          findings.report('after the run', [
            {
              kind: 'hub-down',
              where: 'after',
              detail: after.map((a) => `${a.status} ${a.body.slice(0, 200)}`).join(' | '),
            },
          ]);
        }
        findings.report('after the run', crashes.splice(0));
        return findings;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
