/**
 * Seeded tokens (FLOTILLA_ADMIN_TOKEN, FLOTILLA_BOOTSTRAP_TOKEN) across hub restarts, with a real
 * hub process state (Postgres, harness nats-server): revoking a seeded token over REST survives a
 * restart with the same environment, and a new value in the environment is a new token that
 * replaces the old one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, loadConfig, startHub, type RunningHub } from '@flotilla/hub';
import { migratedDatabase, type HubDb } from './fixtures.js';
import { startFleetNats, type FleetNats } from './fleet.js';

let nats: FleetNats;
let db: HubDb;

beforeAll(async () => {
  nats = await startFleetNats();
  db = await migratedDatabase('flotilla_hub_seed');
});

afterAll(async () => {
  await db?.close();
  await nats?.stop();
});

/** Starts a hub (no HTTP listener) with the given seed tokens; the caller closes it. */
async function hubWith(seed: { admin: string; bootstrap?: string }): Promise<RunningHub> {
  const config = loadConfig({
    DATABASE_URL: db.database.url,
    ...nats.hubEnv,
    FLOTILLA_ADMIN_TOKEN: seed.admin,
    ...(seed.bootstrap ? { FLOTILLA_BOOTSTRAP_TOKEN: seed.bootstrap } : {}),
    LOG_LEVEL: 'warn',
  });
  return startHub({
    config,
    logger: createLogger('warn'),
    listen: false,
    relay: false,
    statusIngest: false,
    rolloutScheduler: false,
  });
}

async function status(hub: RunningHub, token: string): Promise<number> {
  const res = await hub.app.inject({
    method: 'GET',
    url: '/api/v1/tokens',
    headers: { authorization: `Bearer ${token}` },
  });
  return res.statusCode;
}

describe('seeded tokens', () => {
  const admin = 'seed-admin-token-0123456789abcdef';

  it('stay revoked across a restart with the same environment', async () => {
    const first = await hubWith({ admin });
    try {
      expect(await status(first, admin)).toBe(200);
      const list = await first.app.inject({
        method: 'GET',
        url: '/api/v1/tokens',
        headers: { authorization: `Bearer ${admin}` },
      });
      const seeded = list
        .json<{ items: { id: string; name: string }[] }>()
        .items.find((i) => i.name === 'config-admin');
      expect(seeded).toBeDefined();
      const revoke = await first.app.inject({
        method: 'DELETE',
        url: `/api/v1/tokens/${seeded!.id}`,
        headers: { authorization: `Bearer ${admin}` },
      });
      expect(revoke.statusCode).toBe(200);
      expect(await status(first, admin)).toBe(401);
    } finally {
      await first.close();
    }

    const second = await hubWith({ admin });
    try {
      expect(await status(second, admin)).toBe(401);
    } finally {
      await second.close();
    }
  });

  it('take a new value as a new token and retire the old one', async () => {
    const rotated = 'seed-admin-token-rotated-fedcba9876543210';
    const hub = await hubWith({ admin: rotated });
    try {
      expect(await status(hub, rotated)).toBe(200);
      expect(await status(hub, admin)).toBe(401);
      const names = await db.pool.query<{ name: string; revoked: boolean }>(
        `select name, revoked_at is not null as revoked from api_tokens where name like 'config-admin%' order by created_at`,
      );
      expect(names.rows.map((r) => [r.name.replace(/@.*/, '@…'), r.revoked])).toEqual([
        ['config-admin@…', true],
        ['config-admin', false],
      ]);
    } finally {
      await hub.close();
    }
  });
});
