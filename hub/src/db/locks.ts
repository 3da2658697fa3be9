/**
 * Advisory locks, every key declared once. Transaction locks end with their transaction; session
 * locks live as long as the connection that took them (the migration run, the rollout
 * scheduler's leadership). All desired-state writes take the desired lock for their transaction:
 * writes are serialized, so (a) each change is computed from committed data and never from a
 * snapshot that a concurrent workload or cluster change is about to invalidate, and (b) outbox
 * ids follow commit order, which the relay relies on. Desired-state writes are rare and short.
 */
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import type { DbOrTx } from './client.js';

/**
 * Every advisory lock key of the hub, so no two locks can share a key ("flot" in the high bytes,
 * then a number per lock). The migration key predates the scheme and stays what replicas of
 * every version take ("flotilla" in ASCII as a bigint, beyond a JS number's precision, so kept
 * as the decimal text Postgres reads). A unit test checks the keys are distinct.
 */
export const LOCK_KEYS = {
  desired: 0x666c6f7401,
  relay: 0x666c6f7402,
  scheduler: 0x666c6f7403,
  registration: 0x666c6f7404,
  seed: 0x666c6f7405,
  credentials: 0x666c6f7420,
  migration: '7380396435129003105',
} as const;

export type LockKey = (typeof LOCK_KEYS)[keyof typeof LOCK_KEYS];

export async function lockDesiredState(tx: DbOrTx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_KEYS.desired})`);
}

/** Only one relay (across hub replicas) publishes at a time, so publishes keep commit order. */
export async function tryLockRelay(tx: DbOrTx): Promise<boolean> {
  const res = await tx.execute<{ locked: boolean }>(
    sql`select pg_try_advisory_xact_lock(${LOCK_KEYS.relay}) as locked`,
  );
  return res.rows[0]?.locked === true;
}

/** The class of the two-key advisory locks taken per cluster ("flot"); a key space apart from LOCK_KEYS. */
const CLUSTER_LOCK_CLASS = 0x666c6f74;

/**
 * Changes of one cluster's NATS account (claim, renew, re-key, revoke) run one at a time per
 * cluster, and clusters side by side: a fleet of agents joining at once is not serialized. Each
 * holds the credentials lock shared, so the link reconciler's account sync (lockAllCredentials)
 * never runs beside one and never deletes an account that a transaction pushed but has not
 * committed yet (docs/adr/0012).
 */
export async function lockClusterCredentials(tx: DbOrTx, cluster: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock_shared(${LOCK_KEYS.credentials})`);
  await tx.execute(sql`select pg_advisory_xact_lock(${CLUSTER_LOCK_CLASS}::int4, hashtext(${cluster}))`);
}

/** The account sync: alone, while no cluster's account changes. */
export async function lockAllCredentials(tx: DbOrTx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_KEYS.credentials})`);
}

/** Registrations run one at a time, so their limits count committed rows only. */
export async function lockRegistrations(tx: DbOrTx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_KEYS.registration})`);
}

/** Replicas starting at once seed their configured tokens one after the other. */
export async function lockSeeding(tx: DbOrTx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_KEYS.seed})`);
}

/** Waits for a session lock on `client`'s connection. */
export async function lockSession(client: pg.ClientBase, key: LockKey): Promise<void> {
  await client.query('select pg_advisory_lock($1::bigint)', [key]);
}

/** Takes a session lock on `client`'s connection if no other session holds it. */
export async function tryLockSession(client: pg.ClientBase, key: LockKey): Promise<boolean> {
  const res = await client.query<{ locked: boolean }>('select pg_try_advisory_lock($1::bigint) as locked', [key]);
  return res.rows[0]?.locked === true;
}

export async function unlockSession(client: pg.ClientBase, key: LockKey): Promise<void> {
  await client.query('select pg_advisory_unlock($1::bigint)', [key]);
}
