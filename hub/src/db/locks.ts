/**
 * Advisory locks. All desired-state writes take DESIRED_LOCK for their transaction: writes are
 * serialized, so (a) each change is computed from committed data and never from a snapshot
 * that a concurrent workload or cluster change is about to invalidate, and (b) outbox ids
 * follow commit order, which the relay relies on. Desired-state writes are rare and short.
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from './client.js';

/**
 * Every advisory lock key of the hub, declared once so no two locks can share a key ("flot" in
 * the high bytes, then a number per lock). A unit test checks they are distinct.
 */
export const LOCK_KEYS = {
  desired: 0x666c6f7401,
  relay: 0x666c6f7402,
  scheduler: 0x666c6f7403,
  registration: 0x666c6f7404,
  seed: 0x666c6f7405,
  credentials: 0x666c6f7420,
} as const;

const DESIRED_LOCK = LOCK_KEYS.desired;
const RELAY_LOCK = LOCK_KEYS.relay;

export async function lockDesiredState(tx: DbOrTx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${DESIRED_LOCK})`);
}

/** Only one relay (across hub replicas) publishes at a time, so publishes keep commit order. */
export async function tryLockRelay(tx: DbOrTx): Promise<boolean> {
  const res = await tx.execute<{ locked: boolean }>(sql`select pg_try_advisory_xact_lock(${RELAY_LOCK}) as locked`);
  return res.rows[0]?.locked === true;
}

const CREDENTIALS_LOCK = LOCK_KEYS.credentials;

/**
 * Serializes the credential syncs: a sync renders the identities its transaction sees, and a
 * transaction that changes them syncs before it commits, so the last sync to run always saw every
 * committed change (none can write a set that misses another's committed identity).
 */
export async function lockCredentials(tx: DbOrTx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${CREDENTIALS_LOCK})`);
}

/** Registrations run one at a time, so their limits count committed rows only. */
export async function lockRegistrations(tx: DbOrTx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_KEYS.registration})`);
}

/** Replicas starting at once seed their configured tokens one after the other. */
export async function lockSeeding(tx: DbOrTx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_KEYS.seed})`);
}
