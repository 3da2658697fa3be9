/**
 * Pushes the active agent identities from Postgres to the NATS credential issuer. A transaction
 * that changes identities (claim, rotation) passes itself in: the issuer then renders the set as
 * that transaction sees it, before it commits, and a failure rolls the change back (the agent
 * can try again with the same secret). An identity rendered by a transaction that then fails is
 * harmless (no one holds its password) and gone after the next sync.
 */
import type { Db, Tx } from '../db/client.js';
import { lockCredentials } from '../db/locks.js';
import { HubError } from '../errors.js';
import type { NatsCredentialIssuer } from '../nats/credentials/issuer.js';
import { activeCredentials } from '../repositories/clusters-repo.js';

/** Syncs the identities `tx` sees (its own changes included), or the committed ones without it. */
export type CredentialSync = (tx?: Tx) => Promise<void>;

export function createCredentialSync(db: Db, issuer: NatsCredentialIssuer): CredentialSync {
  const syncIn = async (tx: Tx): Promise<void> => {
    await lockCredentials(tx);
    const creds = await activeCredentials(tx);
    await issuer
      .sync(creds.map((c) => ({ cluster: c.cluster, user: c.natsUser, passwordHash: c.passwordHash })))
      .catch((cause: unknown) => {
        if (cause instanceof HubError) throw cause;
        throw new HubError('HUB_ERR_UNAVAILABLE', 'cannot update the NATS authorization', { cause });
      });
  };
  return (tx) => (tx ? syncIn(tx) : db.transaction(syncIn));
}
