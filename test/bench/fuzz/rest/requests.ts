/**
 * Requests to fuzz the hub with, derived route by route from the OpenAPI document: path
 * parameters (objects that exist, schema-shaped values, hostile strings, raw or URL-encoded),
 * query strings (schema-shaped, hostile, continue tokens, label selectors, repeated and unknown
 * parameters), bodies (schema-shaped, domain-valid, broken in places, not JSON, too large) and
 * credentials (a token of each role, revoked, unknown, malformed, in the query string).
 * A request names existing objects by index; the runner resolves them against what the hub
 * has answered so far (see pool.ts).
 */
import fc from 'fast-check';
import { RolloutStrategySchema } from '@flotilla/api';
import { corpusObject } from '../lib/corpus.js';
import { INTERESTING_STRINGS, bulkyJson, hostileString, hostileValue } from '../lib/hostile.js';
import { stringify } from '../lib/json.js';
import { mutated, shaped, type JsonSchema, type ShapeOptions } from '../lib/schema-arbitrary.js';
import type { ParamSpec, RouteSpec } from './routes.js';

export type Auth =
  | 'admin'
  | 'operator'
  | 'viewer'
  | 'bootstrap'
  | 'none'
  | 'empty-bearer'
  | 'basic'
  | 'two-words'
  | 'unknown'
  | 'revoked'
  | 'query-token';

/** A path parameter: an existing object (by index), or a value of its own. */
export type PathValue = { source: 'known'; pick: number } | { source: 'value'; value: string; raw: boolean };

export type Body =
  { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'raw'; text: string; contentType: string | undefined };

export interface FuzzRequest {
  route: RouteSpec;
  /** Another method on the same path (mostly 404s); absent: the route's own. */
  method: string | undefined;
  path: PathValue[];
  query: [string, string][];
  /** Add a continue token some earlier answer carried. */
  harvestedContinue: number | undefined;
  body: Body;
  auth: Auth;
}

/** Replaced by the registration secret the hub gave for the cluster in the path (claims). */
export const SECRET_OF_PATH_CLUSTER = '\u0000secret-of-path-cluster';

const SHAPE: ShapeOptions = { maxDepth: 8, maxOptional: 3, maxItems: 3 };

/** `arb` about once in `every` values, otherwise undefined. */
function rarely<T>(arb: fc.Arbitrary<T>, every: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ arbitrary: fc.constant(undefined), weight: every - 1 }, { arbitrary: arb, weight: 1 });
}

export const auth: fc.Arbitrary<Auth> = fc.oneof(
  { arbitrary: fc.constantFrom<Auth>('admin', 'operator'), weight: 8 },
  { arbitrary: fc.constantFrom<Auth>('viewer', 'bootstrap'), weight: 4 },
  {
    arbitrary: fc.constantFrom<Auth>('none', 'empty-bearer', 'basic', 'two-words', 'unknown', 'revoked', 'query-token'),
    weight: 3,
  },
);

const clusterName = fc.oneof(
  { arbitrary: fc.constantFrom('c1', 'c2', 'c3', 'constructor', 'prototype', 'edge-1'), weight: 3 },
  { arbitrary: fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,8}[a-z0-9])?$/), weight: 2 },
  { arbitrary: hostileString, weight: 1 },
);
/** Label maps: mostly valid (so the request gets past them), sometimes hostile. */
const labels = fc.oneof(
  {
    arbitrary: fc.dictionary(
      fc.constantFrom('env', 'region', 'tier', 'a.b/c'),
      fc.constantFrom('prod', 'eu', 'x', ''),
      {
        maxKeys: 3,
      },
    ),
    weight: 4,
  },
  { arbitrary: fc.dictionary(hostileString, hostileString, { maxKeys: 2 }), weight: 1 },
);
const selector = fc.oneof(
  { arbitrary: fc.constant({}), weight: 3 },
  { arbitrary: fc.record({ matchLabels: labels }), weight: 2 },
  shaped({
    type: 'object',
    properties: {
      matchExpressions: {
        type: 'array',
        items: {
          type: 'object',
          required: ['key', 'operator'],
          properties: {
            key: { type: 'string', enum: ['env', 'region', 'constructor'] },
            operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] },
            values: { type: 'array', items: { type: 'string', enum: ['prod', 'eu'] } },
          },
        },
      },
    },
  }),
);
/** Per-cluster merge patches: mostly ones a CloneSet accepts, some that break it. */
const overridePatch = fc.oneof(
  { arbitrary: fc.record({ replicas: fc.integer({ min: 0, max: 5 }) }), weight: 4 },
  { arbitrary: fc.record({ updateStrategy: fc.record({ paused: fc.boolean() }) }), weight: 1 },
  { arbitrary: fc.record({ replicas: hostileValue }), weight: 1 },
  { arbitrary: fc.record({ template: fc.record({ spec: fc.record({ containers: hostileValue }) }) }), weight: 1 },
  { arbitrary: fc.dictionary(hostileString, hostileValue, { maxKeys: 2 }), weight: 1 },
  { arbitrary: bulkyJson.map((v) => ({ deep: v })), weight: 1 },
);

/** A workload body built from a valid corpus object: reaches revisions, overrides and the outbox. */
function workloadBody(create: boolean): fc.Arbitrary<unknown> {
  return fc
    .record({
      o: corpusObject,
      name: fc.oneof(fc.constantFrom('web', 'api', 'w-1'), fc.stringMatching(/^[a-z]([-a-z0-9]{0,6}[a-z0-9])?$/)),
      namespace: fc.oneof(
        { arbitrary: fc.constantFrom('default', 'team-a'), weight: 8 },
        { arbitrary: fc.constantFrom('kube-system', 'flotilla-system'), weight: 1 },
        { arbitrary: hostileString, weight: 1 },
      ),
      selector,
      overrides: fc.option(fc.dictionary(clusterName, overridePatch, { maxKeys: 2 }), { nil: undefined, freq: 2 }),
      updatePolicy: fc.option(fc.constantFrom('Immediate', 'Rollout'), { nil: undefined }),
    })
    .map(({ o, name, namespace, selector: clusterSelector, overrides, updatePolicy }) => ({
      ...(create ? { kind: o.kind, name, ...(o.kind === 'SidecarSet' ? {} : { namespace }) } : {}),
      metadata: o.metadata,
      // The workload policy wants a SidecarSet kept out of the system namespaces.
      spec: o.kind === 'SidecarSet' && !('namespaceSelector' in o.spec) ? { ...o.spec, namespace } : o.spec,
      placement: { clusterSelector },
      ...(overrides ? { overrides } : {}),
      ...(updatePolicy ? { updatePolicy } : {}),
    }));
}

const strategy = shaped(RolloutStrategySchema as JsonSchema, {
  ...SHAPE,
  hints: { names: fc.array(clusterName, { maxLength: 3 }) },
});

/** Strategies the hub accepts: waves over known clusters, the last one taking the rest. */
const validStrategy = fc
  .record(
    {
      waves: fc.array(
        fc.record(
          {
            clusters: fc.record({ names: fc.subarray(['c1', 'c2', 'c3'], { minLength: 1 }) }),
            maxConcurrency: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.constantFrom('50%', '100%')),
            soakSeconds: fc.integer({ min: 0, max: 2 }),
            approval: fc.constantFrom('None', 'Before', 'After'),
          },
          { requiredKeys: ['clusters'] },
        ),
        { maxLength: 2 },
      ),
      onFailure: fc.constantFrom('Pause', 'Rollback', 'Continue'),
      offlinePolicy: fc.constantFrom('Skip', 'Fail'),
    },
    { requiredKeys: ['waves'] },
  )
  .map((s) => ({ ...s, waves: [...s.waves.map((w, i) => ({ name: `wave-${i}`, ...w })), { name: 'rest' }] }));

/** Bodies a careful client would send, by route (`METHOD path`). */
const DOMAIN_BODIES: Record<string, fc.Arbitrary<unknown>> = {
  'POST /api/v1/workloads': workloadBody(true),
  'PUT /api/v1/workloads/{id}': workloadBody(false),
  'POST /api/v1/workloads/{id}/rollouts': fc.record(
    {
      strategy: fc.oneof({ arbitrary: validStrategy, weight: 3 }, { arbitrary: strategy, weight: 1 }),
      revision: fc.integer({ min: 1, max: 2 }),
    },
    { requiredKeys: ['strategy'] },
  ),
  'POST /api/v1/clusters/register': fc.record({ name: clusterName, labels }, { requiredKeys: ['name'] }),
  'POST /api/v1/clusters/{name}/claim': fc.constant({ registrationSecret: SECRET_OF_PATH_CLUSTER }),
  'PUT /api/v1/clusters/{name}/labels': fc.record({ labels }),
};

/** Text bodies that are not what the route reads. */
const rawBody: fc.Arbitrary<Body> = fc.oneof(
  fc.record({
    kind: fc.constant('raw' as const),
    text: fc.constantFrom('', '{', '{"a":', 'null', '[]', '"x"', '1e999', '{"__proto__":{"x":1}}', '\ufeff{}'),
    contentType: fc.constant('application/json'),
  }),
  fc.record({
    kind: fc.constant('raw' as const),
    text: fc.oneof(fc.string({ maxLength: 30 }), fc.constant('a=1&b=2')),
    contentType: fc.constantFrom(
      undefined,
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=utf-16',
      'application/merge-patch+json',
      'application/octet-stream',
    ),
  }),
  fc
    .constantFrom(1024 * 1024 + 1, 3 * 1024 * 1024)
    .map((n) => ({ kind: 'raw' as const, text: `{"a":"${'x'.repeat(n)}"}`, contentType: 'application/json' })),
);

function bodyFor(route: RouteSpec): fc.Arbitrary<Body> {
  const json = (a: fc.Arbitrary<unknown>): fc.Arbitrary<Body> => a.map((value) => ({ kind: 'json' as const, value }));
  const domain = DOMAIN_BODIES[`${route.method} ${route.path}`];
  const schema = route.body
    ? shaped(route.body, { ...SHAPE, hints: { strategy, overrides: fc.dictionary(clusterName, overridePatch) } })
    : undefined;
  // Domain-valid bodies twice as often as schema-shaped ones: they get past the validators.
  const valid = [
    ...(domain ? [{ arbitrary: domain, weight: 2 }] : []),
    ...(schema ? [{ arbitrary: schema, weight: 1 }] : []),
  ];
  const options: { arbitrary: fc.Arbitrary<Body>; weight: number }[] = [
    { arbitrary: rawBody, weight: 1 },
    { arbitrary: json(hostileValue), weight: 1 },
  ];
  if (valid.length > 0) {
    options.push(
      { arbitrary: json(fc.oneof(...valid)), weight: 6 },
      { arbitrary: json(mutated(fc.oneof(...valid))), weight: 4 },
    );
  }
  // Routes without a body mostly get none: the answer to the request itself is what counts.
  if (!route.body) options.push({ arbitrary: fc.constant({ kind: 'none' as const }), weight: 12 });
  return fc.oneof(...options);
}

const labelSelectorText: fc.Arbitrary<string> = fc.oneof(
  fc
    .array(
      fc.oneof(
        fc
          .tuple(
            fc.constantFrom('env', 'region', 'a.b/c', 'constructor'),
            fc.constantFrom('=', '==', '!='),
            fc.constantFrom('prod', 'eu', ''),
          )
          .map((t) => t.join('')),
        fc
          .tuple(
            fc.constantFrom('env', 'tier'),
            fc.constantFrom(' in ', ' notin '),
            fc.constantFrom('(prod,eu)', '()', '(a'),
          )
          .map((t) => t.join('')),
        fc.constantFrom('!legacy', 'canary', '', ',', '(', ')', '=', '!', 'a in', 'x'.repeat(400)),
      ),
      { maxLength: 4 },
    )
    .map((terms) => terms.join(',')),
  hostileString,
);

/** Continue tokens: random text, base64url JSON of plausible and implausible keys. */
const continueToken: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc
    .array(
      fc.oneof(
        fc.string({ maxLength: 10 }),
        fc.integer(),
        fc.constantFrom(
          1e20,
          -1,
          2 ** 31,
          1.5,
          '2026-01-01T00:00:00Z',
          'not-a-date',
          '00000000-0000-0000-0000-000000000000',
        ),
      ),
      { maxLength: 4 },
    )
    .map((parts) => Buffer.from(JSON.stringify(parts)).toString('base64url')),
  hostileValue.map((v) => Buffer.from(stringify(v)).toString('base64url').slice(0, 600)),
);

function queryValue(p: ParamSpec): fc.Arbitrary<string> {
  const special =
    p.name === 'continue'
      ? continueToken
      : p.name === 'labelSelector'
        ? labelSelectorText
        : shaped(p.schema).map(String);
  // The event stream follows a live rollout until it ends: only a value that stops it or fails.
  if (p.name === 'follow') return fc.constantFrom('false', 'no', 'maybe', '2', '{}');
  return fc.oneof(
    { arbitrary: special, weight: 4 },
    { arbitrary: fc.constantFrom('', '-1', '0', '1', '1000', '1001', '2147483648', '1e20', 'NaN', 'true'), weight: 1 },
    { arbitrary: hostileString, weight: 1 },
  );
}

function queryFor(route: RouteSpec): fc.Arbitrary<[string, string][]> {
  const params = route.params.filter((p) => p.in === 'query');
  const chosen = params.map((p) => {
    const pair = queryValue(p).map((v): [string, string] => [p.name, v]);
    // Without `follow` the event stream of a live rollout stays open until the rollout ends.
    return p.name === 'follow' ? pair : fc.option(pair, { nil: undefined, freq: 2 });
  });
  const extra = rarely(fc.tuple(fc.constantFrom('token', 'x', 'limit', '__proto__'), hostileString), 6);
  return fc.tuple(fc.tuple(...chosen), extra, fc.boolean()).map(([picked, more, repeat]) => {
    const q = picked.filter((x): x is [string, string] => x !== undefined);
    if (more) q.push(more);
    if (repeat && q.length > 0) q.push(q[0]!);
    return q;
  });
}

function pathValue(p: ParamSpec): fc.Arbitrary<PathValue> {
  const own = p.schema.enum || p.schema.anyOf ? shaped(p.schema).map(String) : fc.constantFrom('c1', 'x', '1');
  return fc.oneof(
    { arbitrary: fc.nat().map((pick) => ({ source: 'known' as const, pick })), weight: 6 },
    { arbitrary: fc.record({ source: fc.constant('value' as const), value: own, raw: fc.constant(false) }), weight: 2 },
    {
      arbitrary: fc.record({
        source: fc.constant('value' as const),
        value: fc.oneof(
          hostileString,
          fc.constantFrom(...INTERESTING_STRINGS),
          fc.constantFrom('2147483648', '1e20', '-1', '0'),
        ),
        raw: fc.boolean(),
      }),
      weight: 2,
    },
  );
}

/** One request for one route. */
export function requestFor(route: RouteSpec): fc.Arbitrary<FuzzRequest> {
  const pathParams = route.path.match(/\{[^}]+\}/g) ?? [];
  const specs = pathParams.map(
    (t) =>
      route.params.find((p) => p.in === 'path' && `{${p.name}}` === t) ?? {
        name: t.slice(1, -1),
        in: 'path' as const,
        required: true,
        schema: {},
      },
  );
  return fc.record({
    route: fc.constant(route),
    method: rarely(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'), 12),
    path: fc.tuple(...specs.map(pathValue)),
    query: queryFor(route),
    harvestedContinue: rarely(fc.nat(), 8),
    body: bodyFor(route),
    auth,
  });
}

/** Requests over every route, each route about equally often. */
export function requestArbitrary(routes: readonly RouteSpec[]): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(...routes.map(requestFor));
}
