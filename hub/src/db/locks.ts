/**
 * Advisory locks. All desired-state writes take DESIRED_LOCK for their transaction: writes are
 * serialized, so (a) each change is computed from committed data and never from a snapshot
 * that a concurrent workload or cluster change is about to invalidate, and (b) outbox ids
 * follow commit order, which the relay relies on. Desired-state writes are rare and short.
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from './client.js';

const DESIRED_LOCK = 0x666c6f7401; // "flot" + 1
const RELAY_LOCK = 0x666c6f7402;

export async function lockDesiredState(tx: DbOrTx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${DESIRED_LOCK})`);
}

/** Only one relay (across hub replicas) publishes at a time, so publishes keep commit order. */
export async function tryLockRelay(tx: DbOrTx): Promise<boolean> {
  const res = await tx.execute<{ locked: boolean }>(sql`select pg_try_advisory_xact_lock(${RELAY_LOCK}) as locked`);
  return res.rows[0]?.locked === true;
}

const CREDENTIALS_LOCK = 0x666c6f7420; // "flot" + 0x20

/**
 * Serializes the credential syncs: a sync renders the identities its transaction sees, and a
 * transaction that changes them syncs before it commits, so the last sync to run always saw every
 * committed change (none can write a set that misses another's committed identity).
 */
export async function lockCredentials(tx: DbOrTx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${CREDENTIALS_LOCK})`);
}
