/**
 * The hub's REST API against a real Postgres (no NATS: the app's side effects are injected).
 * Covers auth and roles, registration, workloads and revisions, placement/override/relabel in
 * the desired-state tables and outbox, bad input, pagination and the audit log.
 */
import { SIGNATURE_HEADER, newAgentKey, signRequest } from '@flotilla/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_MIGRATIONS_FOLDER, runMigrations } from '@flotilla/hub';
import { call, cloneSetSpec, insertToken, migratedDatabase, restApp, type HubDb, type TestApp } from './fixtures.js';

let hub: HubDb;
let t: TestApp;
const tokens: Record<'admin' | 'operator' | 'viewer' | 'bootstrap', string> = {
  admin: '',
  operator: '',
  viewer: '',
  bootstrap: '',
};

beforeAll(async () => {
  hub = await migratedDatabase('flotilla_hub_rest');
  for (const role of ['admin', 'operator', 'viewer', 'bootstrap'] as const) {
    tokens[role] = await insertToken(hub.pool, `test-${role}`, role);
  }
  t = await restApp(hub.db);
});

afterAll(async () => {
  await t?.app.close();
  await hub?.close();
});

/** Registers and accepts a cluster; returns its registration secret. */
async function joinCluster(name: string, labels: Record<string, string>): Promise<string> {
  const reg = await call(t.app, 'POST', '/api/v1/clusters/register', tokens.bootstrap, {
    name,
    labels,
    publicKey: newAgentKey().publicKey,
  });
  expect(reg.statusCode, reg.body).toBe(201);
  const acc = await call(t.app, 'POST', `/api/v1/clusters/${name}/accept`, tokens.operator);
  expect(acc.statusCode, acc.body).toBe(200);
  return reg.json<{ registrationSecret: string }>().registrationSecret;
}

interface DesiredRow {
  cluster_name: string;
  deleted: boolean;
  generation: string;
  manifest: { spec: { replicas: number } } | null;
}

async function desiredRows(name: string): Promise<DesiredRow[]> {
  const res = await hub.pool.query<DesiredRow>(
    'select cluster_name, deleted, generation, manifest from desired_objects where name = $1 order by cluster_name',
    [name],
  );
  return res.rows;
}

describe('auth', () => {
  it('rejects a missing or unknown token with 401', async () => {
    const none = await call(t.app, 'GET', '/api/v1/clusters', undefined);
    expect(none.statusCode).toBe(401);
    expect(none.json().error.code).toBe('HUB_ERR_UNAUTHORIZED');
    const bad = await call(t.app, 'GET', '/api/v1/clusters', 'flt_not-a-token');
    expect(bad.statusCode).toBe(401);
  });

  it('lets a viewer read but not write (403)', async () => {
    expect((await call(t.app, 'GET', '/api/v1/workloads', tokens.viewer)).statusCode).toBe(200);
    const write = await call(t.app, 'POST', '/api/v1/workloads', tokens.viewer, {
      kind: 'CloneSet',
      name: 'nope',
      namespace: 'default',
      spec: cloneSetSpec(),
      placement: { clusterSelector: {} },
    });
    expect(write.statusCode).toBe(403);
    expect(write.json().error.code).toBe('HUB_ERR_FORBIDDEN');
    expect((await call(t.app, 'GET', '/api/v1/workloads', tokens.bootstrap)).statusCode).toBe(403);
  });

  it('issues a token once, lists it without the secret, and refuses it once revoked (401)', async () => {
    const created = await call(t.app, 'POST', '/api/v1/tokens', tokens.admin, { name: 'ci-bot', role: 'operator' });
    expect(created.statusCode, created.body).toBe(201);
    const { id, token } = created.json<{ id: string; token: string }>();
    expect(token).toMatch(/^flt_/);
    expect((await call(t.app, 'GET', '/api/v1/workloads', token)).statusCode).toBe(200);
    const list = await call(t.app, 'GET', '/api/v1/tokens', tokens.admin);
    expect(list.body).not.toContain(token);
    expect(
      (await call(t.app, 'POST', '/api/v1/tokens', tokens.admin, { name: 'ci-bot', role: 'viewer' })).statusCode,
    ).toBe(409);
    expect((await call(t.app, 'DELETE', `/api/v1/tokens/${id}`, tokens.admin)).statusCode).toBe(200);
    const after = await call(t.app, 'GET', '/api/v1/workloads', token);
    expect(after.statusCode).toBe(401);
    expect((await call(t.app, 'GET', '/api/v1/tokens', tokens.operator)).statusCode).toBe(403);
  });
});

describe('cluster registration', () => {
  it('is double opt-in: register → pending → accept → credentials claimed once', async () => {
    const key = newAgentKey();
    const claimUrl = '/api/v1/clusters/edge-1/claim';
    const signed = (body: unknown): Record<string, string> => ({
      [SIGNATURE_HEADER]: signRequest(key.seed, { method: 'POST', path: claimUrl, body }, Date.now()),
    });
    const reg = await call(t.app, 'POST', '/api/v1/clusters/register', tokens.bootstrap, {
      name: 'edge-1',
      publicKey: key.publicKey,
      labels: { env: 'edge' },
      agentVersion: '0.1.0',
      kubernetesVersion: 'v1.36.3',
    });
    expect(reg.statusCode, reg.body).toBe(201);
    const { cluster, registrationSecret } = reg.json<{
      cluster: { state: string; health: string };
      registrationSecret: string;
    }>();
    expect(cluster).toMatchObject({ state: 'pending', health: 'Pending' });

    const dup = await call(t.app, 'POST', '/api/v1/clusters/register', tokens.bootstrap, {
      name: 'edge-1',
      publicKey: newAgentKey().publicKey,
    });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error.code).toBe('HUB_ERR_CONFLICT');

    const early = await call(
      t.app,
      'POST',
      claimUrl,
      tokens.bootstrap,
      { registrationSecret },
      signed({ registrationSecret }),
    );
    expect(early.statusCode).toBe(409);
    expect(early.json().error.code).toBe('HUB_ERR_CLUSTER_NOT_ACCEPTED');

    expect((await call(t.app, 'POST', '/api/v1/clusters/edge-1/accept', tokens.viewer)).statusCode).toBe(403);
    const acc = await call(t.app, 'POST', '/api/v1/clusters/edge-1/accept', tokens.operator);
    expect(acc.json()).toMatchObject({ state: 'accepted', health: 'Offline' });

    const wrong = await call(
      t.app,
      'POST',
      claimUrl,
      tokens.bootstrap,
      { registrationSecret: 'flreg_wrong' },
      signed({
        registrationSecret: 'flreg_wrong',
      }),
    );
    expect(wrong.statusCode).toBe(403);
    // The right secret without the key's signature, or signed by another key: the same refusal.
    const unsigned = await call(t.app, 'POST', claimUrl, tokens.bootstrap, { registrationSecret });
    expect(unsigned.statusCode).toBe(403);
    const otherKey = newAgentKey();
    const foreign = await call(
      t.app,
      'POST',
      claimUrl,
      tokens.bootstrap,
      { registrationSecret },
      {
        [SIGNATURE_HEADER]: signRequest(
          otherKey.seed,
          { method: 'POST', path: claimUrl, body: { registrationSecret } },
          Date.now(),
        ),
      },
    );
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().error.code).toBe(unsigned.json().error.code);

    const pushesBefore = t.accountPushes().length;
    const claim = await call(
      t.app,
      'POST',
      claimUrl,
      tokens.bootstrap,
      { registrationSecret },
      signed({ registrationSecret }),
    );
    expect(claim.statusCode, claim.body).toBe(200);
    const creds = claim.json<{ nats: { jwt: string; inboxPrefix: string; consumer: string; apiPrefix: string } }>();
    expect(creds.nats).toMatchObject({
      inboxPrefix: '_INBOX_edge-1',
      consumer: 'agent-edge-1',
      apiPrefix: 'flotilla.js',
    });
    // A user JWT for the agent's own key, in the account the hub pushed for the cluster.
    const user = jwtClaims(creds.nats.jwt);
    expect(user.sub).toBe(key.publicKey);
    expect(t.accountPushes()).toHaveLength(pushesBefore + 1);
    const account = jwtClaims(t.accountPushes().at(-1)!);
    expect(user.nats.issuer_account).toBe(account.sub);
    expect(account.nats.imports?.map((i) => i.subject)).toContain('flotilla.status.edge-1.>');

    const again = await call(
      t.app,
      'POST',
      claimUrl,
      tokens.bootstrap,
      { registrationSecret },
      signed({ registrationSecret }),
    );
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('HUB_ERR_CREDENTIALS_CLAIMED');

    // The hub keeps public keys and the JWT's id only: nothing to connect with.
    const stored = await hub.pool.query(
      'select agent_public_key, account_public_key, credential_id from clusters where name = $1',
      ['edge-1'],
    );
    expect(stored.rows[0]).toEqual({
      agent_public_key: key.publicKey,
      account_public_key: account.sub,
      credential_id: user.jti,
    });

    const got = await call(t.app, 'GET', '/api/v1/clusters/edge-1', tokens.viewer);
    expect(got.json()).toMatchObject({
      name: 'edge-1',
      labels: { env: 'edge' },
      agentVersion: '0.1.0',
      kubernetesVersion: 'v1.36.3',
      credentialsIssued: true,
    });
    expect(got.body).not.toContain(creds.nats.jwt);
    expect(got.body).not.toContain(key.seed);
    expect(got.body).not.toContain(registrationSecret);
  });

  it('lists with label selector, health filter and pagination', async () => {
    await joinCluster('page-a', { tier: 'gold', zone: 'x' });
    await joinCluster('page-b', { tier: 'gold', zone: 'y' });
    await joinCluster('page-c', { tier: 'silver' });
    const gold = await call(t.app, 'GET', '/api/v1/clusters?labelSelector=tier%3Dgold', tokens.viewer);
    expect(gold.json<{ items: { name: string }[] }>().items.map((c) => c.name)).toEqual(['page-a', 'page-b']);
    const setSel = await call(
      t.app,
      'GET',
      '/api/v1/clusters?labelSelector=tier%20in%20(gold,silver),zone!%3Dy',
      tokens.viewer,
    );
    expect(setSel.json<{ items: { name: string }[] }>().items.map((c) => c.name)).toEqual(['page-a', 'page-c']);
    const offline = await call(t.app, 'GET', '/api/v1/clusters?health=Offline&labelSelector=tier', tokens.viewer);
    expect(offline.json<{ items: unknown[] }>().items).toHaveLength(3);

    const names: string[] = [];
    let cont: string | undefined;
    do {
      const res = await call(
        t.app,
        'GET',
        `/api/v1/clusters?limit=1&labelSelector=tier${cont ? `&continue=${cont}` : ''}`,
        tokens.viewer,
      );
      const page = res.json<{ items: { name: string }[]; continue?: string }>();
      names.push(...page.items.map((c) => c.name));
      cont = page.continue;
    } while (cont);
    expect(names).toEqual(['page-a', 'page-b', 'page-c']);

    const badSel = await call(t.app, 'GET', '/api/v1/clusters?labelSelector=a%20in%20b', tokens.viewer);
    expect(badSel.statusCode).toBe(400);
    expect(badSel.json().error.details[0].path).toBe('labelSelector');
    const badCont = await call(t.app, 'GET', '/api/v1/clusters?continue=zzz', tokens.viewer);
    expect(badCont.statusCode).toBe(400);
  });

  it('answers 404 for unknown clusters', async () => {
    expect((await call(t.app, 'GET', '/api/v1/clusters/nope', tokens.viewer)).statusCode).toBe(404);
    expect((await call(t.app, 'POST', '/api/v1/clusters/nope/accept', tokens.operator)).statusCode).toBe(404);
    expect((await call(t.app, 'DELETE', '/api/v1/clusters/nope', tokens.operator)).statusCode).toBe(404);
  });
});

describe('workloads', () => {
  it('creates revisions only when the content changes and lists them', async () => {
    type Selector = { matchLabels: Record<string, string> };
    const created = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, {
      kind: 'CloneSet',
      name: 'rev-web',
      namespace: 'apps',
      spec: cloneSetSpec(2),
      placement: { clusterSelector: { matchLabels: { nothing: 'matches' } } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const w = created.json<{ id: string; revision: number }>();
    expect(w.revision).toBe(1);

    const update = (spec: Record<string, unknown>, selector: Selector = { matchLabels: { nothing: 'matches' } }) =>
      call(t.app, 'PUT', `/api/v1/workloads/${w.id}`, tokens.operator, {
        spec,
        placement: { clusterSelector: selector },
      });
    expect((await update(cloneSetSpec(3))).json().revision).toBe(2);
    expect((await update(cloneSetSpec(3))).json().revision).toBe(2);
    expect((await update(cloneSetSpec(3), { matchLabels: { other: 'x' } })).json().revision).toBe(2);

    const revs = await call(t.app, 'GET', `/api/v1/workloads/${w.id}/revisions?limit=1`, tokens.viewer);
    const page = revs.json<{ items: { revision: number; spec: { replicas: number } }[]; continue?: string }>();
    expect(page.items.map((r) => r.revision)).toEqual([2]);
    const rest = await call(
      t.app,
      'GET',
      `/api/v1/workloads/${w.id}/revisions?continue=${page.continue}`,
      tokens.viewer,
    );
    expect(rest.json<{ items: { spec: { replicas: number } }[] }>().items[0]!.spec.replicas).toBe(2);
    const one = await call(t.app, 'GET', `/api/v1/workloads/${w.id}/revisions/1`, tokens.viewer);
    expect(one.json().hash).toMatch(/^[0-9a-f]{64}$/);

    const dup = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, {
      kind: 'CloneSet',
      name: 'rev-web',
      namespace: 'apps',
      spec: cloneSetSpec(),
      placement: { clusterSelector: {} },
    });
    expect(dup.statusCode).toBe(409);
  });

  it('answers 404 for unknown ids', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      expect((await call(t.app, 'GET', `/api/v1/workloads/${id}`, tokens.viewer)).statusCode).toBe(404);
      expect((await call(t.app, 'DELETE', `/api/v1/workloads/${id}`, tokens.operator)).statusCode).toBe(404);
      expect((await call(t.app, 'GET', `/api/v1/workloads/${id}/status`, tokens.viewer)).statusCode).toBe(404);
    }
    const res = await call(t.app, 'GET', '/api/v1/no-such-route', tokens.viewer);
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('HUB_ERR_NOT_FOUND');
  });

  it('rejects bad input with 400 and field paths', async () => {
    const res = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, {
      kind: 'CloneSet',
      name: 'bad',
      namespace: 'apps',
      spec: cloneSetSpec(),
      placement: { clusterSelector: { matchExpressions: [{ key: 'env', operator: 'Sometimes' }] } },
      surprise: true,
    });
    expect(res.statusCode).toBe(400);
    const paths = res.json<{ error: { code: string; details: { path: string }[] } }>().error.details.map((d) => d.path);
    expect(res.json().error.code).toBe('HUB_ERR_INVALID');
    expect(paths).toContain('placement.clusterSelector.matchExpressions[0].operator');
    expect(paths).toContain('surprise');

    const noNs = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, {
      kind: 'CloneSet',
      name: 'bad',
      spec: cloneSetSpec(),
      placement: { clusterSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: [] }] } },
    });
    expect(noNs.statusCode).toBe(400);
    expect(noNs.json<{ error: { details: { path: string }[] } }>().error.details.map((d) => d.path)).toEqual([
      'namespace',
      'placement.clusterSelector.matchExpressions[0].values',
    ]);

    const scoped = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, {
      kind: 'SidecarSet',
      name: 'bad',
      namespace: 'apps',
      spec: { selector: { matchLabels: { app: 'x' } }, containers: [{ name: 's', image: 'img:1' }] },
      placement: { clusterSelector: {} },
    });
    expect(scoped.statusCode).toBe(400);
    expect(scoped.json().error.details[0].path).toBe('namespace');
  });

  it('validates the spec and every override with the api validators', async () => {
    const res = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, {
      kind: 'CloneSet',
      name: 'bad-spec',
      namespace: 'apps',
      spec: cloneSetSpec(-1),
      placement: { clusterSelector: {} },
      overrides: { c2: { replicas: 3 }, c3: { replicas: -5 } },
    });
    expect(res.statusCode).toBe(400);
    const paths = res.json<{ error: { details: { path: string }[] } }>().error.details.map((d) => d.path);
    // The template's own error, then the override's; c2's patch fixes replicas, so it adds nothing.
    expect(paths).toEqual(['spec.replicas', 'overrides.c3.replicas']);
  });

  it('answers 413 for oversized bodies', async () => {
    const res = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, {
      kind: 'CloneSet',
      name: 'huge',
      namespace: 'apps',
      spec: { ...cloneSetSpec(), padding: 'x'.repeat(100 * 1024) },
      placement: { clusterSelector: {} },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('HUB_ERR_PAYLOAD_TOO_LARGE');
  });
});

describe('desired state', () => {
  it('follows placement, overrides, relabels, removal and deletion — each change with an outbox row', async () => {
    await joinCluster('ds-1', { env: 'prod' });
    await joinCluster('ds-2', { env: 'prod' });
    await joinCluster('ds-3', { env: 'dev' });
    const outboxBefore = Number((await hub.pool.query('select count(*) from outbox')).rows[0].count);
    const created = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, {
      kind: 'CloneSet',
      name: 'ds-web',
      namespace: 'apps',
      spec: cloneSetSpec(2),
      placement: { clusterSelector: { matchLabels: { env: 'prod' } } },
      overrides: { 'ds-2': { replicas: 5 } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json<{ id: string }>().id;

    let rows = await desiredRows('ds-web');
    expect(rows.map((r) => [r.cluster_name, r.deleted, r.manifest?.spec.replicas])).toEqual([
      ['ds-1', false, 2],
      ['ds-2', false, 5],
    ]);
    const manifest = rows[0]!.manifest as unknown as {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
    };
    expect(manifest.metadata.labels['flotilla.io/managed-by']).toBe('hub');
    expect(manifest.metadata.annotations['flotilla.io/workload']).toBe(id);

    // Relabel: ds-3 joins, ds-1 leaves (tombstone).
    await call(t.app, 'PUT', '/api/v1/clusters/ds-3/labels', tokens.operator, { labels: { env: 'prod' } });
    await call(t.app, 'PUT', '/api/v1/clusters/ds-1/labels', tokens.operator, { labels: { env: 'staging' } });
    rows = await desiredRows('ds-web');
    expect(rows.map((r) => [r.cluster_name, r.deleted, r.generation])).toEqual([
      ['ds-1', true, '2'],
      ['ds-2', false, '1'],
      ['ds-3', false, '1'],
    ]);

    const status = await call(t.app, 'GET', `/api/v1/workloads/${id}/status`, tokens.viewer);
    const body = status.json<{
      aggregate: { clusters: number; byHealth: Record<string, number> };
      items: { cluster: string; health: string }[];
    }>();
    expect(body.items.map((i) => [i.cluster, i.health])).toEqual([
      ['ds-2', 'Pending'],
      ['ds-3', 'Pending'],
    ]);
    expect(body.aggregate).toMatchObject({ clusters: 2, byHealth: { Pending: 2 } });
    const filtered = await call(
      t.app,
      'GET',
      `/api/v1/workloads/${id}/status?labelSelector=env%3Dprod&limit=1`,
      tokens.viewer,
    );
    const page = filtered.json<{ items: { cluster: string }[]; continue?: string; aggregate: { clusters: number } }>();
    expect(page.items.map((i) => i.cluster)).toEqual(['ds-2']);
    expect(page.aggregate.clusters).toBe(2);
    const next = await call(
      t.app,
      'GET',
      `/api/v1/workloads/${id}/status?labelSelector=env%3Dprod&continue=${page.continue}`,
      tokens.viewer,
    );
    expect(next.json<{ items: { cluster: string }[] }>().items.map((i) => i.cluster)).toEqual(['ds-3']);
    const none = await call(t.app, 'GET', `/api/v1/workloads/${id}/status?health=Healthy`, tokens.viewer);
    expect(none.json<{ items: unknown[] }>().items).toEqual([]);
    const perCluster = await call(t.app, 'GET', '/api/v1/clusters/ds-2/status', tokens.viewer);
    expect(perCluster.json<{ items: { name: string }[] }>().items.map((i) => i.name)).toEqual(['ds-web']);

    // Removing a cluster tombstones what it had; deleting the workload tombstones the rest.
    expect((await call(t.app, 'DELETE', '/api/v1/clusters/ds-3', tokens.operator)).statusCode).toBe(204);
    expect((await call(t.app, 'DELETE', `/api/v1/workloads/${id}`, tokens.operator)).statusCode).toBe(204);
    rows = await desiredRows('ds-web');
    expect(rows.every((r) => r.deleted)).toBe(true);
    expect((await call(t.app, 'GET', `/api/v1/workloads/${id}`, tokens.viewer)).statusCode).toBe(404);

    // 2 creates + 1 relabel-in + 1 relabel-out + 1 removal + 1 delete (ds-2) = 6 outbox rows.
    const outbox = await hub.pool.query('select subject, msg_id, payload from outbox where id > 0 order by id');
    const mine = outbox.rows.slice(outboxBefore);
    expect(mine).toHaveLength(6);
    expect(new Set(mine.map((r: { msg_id: string }) => r.msg_id)).size).toBe(6);
    expect(mine.map((r: { subject: string }) => r.subject)).toContain('flotilla.desired.ds-2.CloneSet.apps.ds-web');
    expect(JSON.parse(String(mine.at(-1).payload))).toMatchObject({ cluster: 'ds-2', deleted: true, generation: 2 });
  });

  it('recreating a deleted workload continues the generation sequence', async () => {
    await joinCluster('gen-1', { gen: 'yes' });
    const body = {
      kind: 'CloneSet',
      name: 'gen-web',
      namespace: 'apps',
      spec: cloneSetSpec(1),
      placement: { clusterSelector: { matchLabels: { gen: 'yes' } } },
    };
    const first = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, body);
    await call(t.app, 'DELETE', `/api/v1/workloads/${first.json<{ id: string }>().id}`, tokens.operator);
    const second = await call(t.app, 'POST', '/api/v1/workloads', tokens.operator, body);
    expect(second.statusCode).toBe(201);
    const rows = await desiredRows('gen-web');
    expect(rows.map((r) => [r.deleted, r.generation])).toEqual([[false, '3']]);
  });
});

describe('migrations', () => {
  it('are safe when several hub replicas start at once', async () => {
    const fresh = await migratedDatabase('flotilla_hub_migrate');
    // Back to an empty database, then three "replicas" migrate it at the same time.
    await fresh.pool.query('drop schema public cascade; create schema public; drop schema if exists drizzle cascade');
    const pools = [0, 1, 2].map(() => new pg.Pool({ connectionString: fresh.database.url, max: 2 }));
    try {
      await Promise.all(pools.map((p) => runMigrations(p)));
      const applied = await fresh.pool.query('select count(*)::int as n from drizzle.__drizzle_migrations');
      const journal = JSON.parse(
        readFileSync(path.join(DEFAULT_MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8'),
      ) as { entries: unknown[] };
      expect(applied.rows[0].n).toBe(journal.entries.length);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
      await fresh.close();
    }
  });
});

describe('audit, OpenAPI, probes', () => {
  it('records every change without secrets', async () => {
    const res = await call(t.app, 'GET', '/api/v1/audit?limit=500', tokens.admin);
    expect(res.statusCode).toBe(200);
    const actions = new Set(res.json<{ items: { action: string }[] }>().items.map((i) => i.action));
    for (const a of [
      'token.create',
      'token.revoke',
      'cluster.register',
      'cluster.accept',
      'cluster.credentials.claim',
      'cluster.labels',
      'cluster.remove',
      'workload.create',
      'workload.update',
      'workload.delete',
    ]) {
      expect(actions).toContain(a);
    }
    expect(res.body).not.toMatch(/flt_|flreg_|password"\s*:\s*"[^[]/);
    expect((await call(t.app, 'GET', '/api/v1/audit', tokens.operator)).statusCode).toBe(403);
  });

  it('serves OpenAPI, probes and metrics', async () => {
    const spec = await call(t.app, 'GET', '/api/v1/openapi.json', undefined);
    expect(spec.statusCode).toBe(200);
    expect(Object.keys(spec.json<{ paths: object }>().paths)).toContain('/api/v1/workloads/{id}/status');
    expect((await call(t.app, 'GET', '/healthz', undefined)).statusCode).toBe(200);
    expect((await call(t.app, 'GET', '/readyz', undefined)).statusCode).toBe(200);
    const metrics = await call(t.app, 'GET', '/metrics', undefined);
    expect(metrics.body).toContain('flotilla_hub_http_request_duration_seconds');
  });
});

interface JwtClaims {
  sub: string;
  jti: string;
  nats: { issuer_account?: string; imports?: { subject: string }[] };
}

/** The claims of a NATS JWT (not verified: the test reads what the hub signed). */
function jwtClaims(jwt: string): JwtClaims {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as JwtClaims;
}
