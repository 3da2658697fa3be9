/**
 * Brings the NATS resolver in line with Postgres (docs/adr/0012): an accepted cluster's account
 * the resolver lacks is pushed (a NATS cluster that lost its resolver directory gets it back, with
 * the current revocations; the resolver's own pack exchange catches up a single node), and every
 * account the resolver holds that is neither the hub's, the system's nor
 * an accepted cluster's is deleted (a removal while NATS or the hub was down). Runs under the
 * credentials lock, which every claim, renew and re-key also takes before it pushes, so an account
 * pushed by a transaction that has not committed yet is never taken for a stale one.
 */
import type { Db } from '../db/client.js';
import { lockAllCredentials } from '../db/locks.js';
import type { NatsAccountIssuer } from '../nats/auth/issuer.js';
import { acceptedAccounts } from '../repositories/clusters-repo.js';

export interface AccountSyncResult {
  pushed: number;
  deleted: string[];
}

/** Pushes missing accounts of accepted clusters and deletes the others; `keep` are the hub's own. */
export type AccountSync = () => Promise<AccountSyncResult>;

export function createAccountSync(db: Db, accounts: NatsAccountIssuer, keep: readonly string[]): AccountSync {
  return () =>
    db.transaction(async (tx) => {
      await lockAllCredentials(tx);
      const wanted = await acceptedAccounts(tx);
      const held = await accounts.listAccounts();
      const live = new Set([...keep, ...wanted.map((a) => a.accountKey)]);
      const present = new Set(held);
      const missing = wanted.filter((a) => !present.has(a.accountKey));
      for (const a of missing) await accounts.pushAccount(a);
      const deleted = held.filter((k) => !live.has(k));
      await accounts.deleteAccounts(deleted);
      return { pushed: missing.length, deleted };
    });
}
