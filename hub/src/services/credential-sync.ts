/** Pushes the active agent identities from Postgres to the NATS credential issuer. */
import type { Db } from '../db/client.js';
import type { NatsCredentialIssuer } from '../nats/credentials/issuer.js';
import { activeCredentials } from '../repositories/clusters-repo.js';

export type CredentialSync = () => Promise<void>;

export function createCredentialSync(db: Db, issuer: NatsCredentialIssuer): CredentialSync {
  return async () => {
    const creds = await activeCredentials(db);
    await issuer.sync(creds.map((c) => ({ cluster: c.cluster, user: c.natsUser, passwordHash: c.passwordHash })));
  };
}
