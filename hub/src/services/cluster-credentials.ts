/**
 * Issuing an accepted cluster's NATS credentials (claim and rotation): a new random password,
 * older ones revoked, only its bcrypt hash kept. Before the caller's transaction commits, the
 * cluster's durable is created and nats-server given the new identity, so when either fails the
 * change rolls back and the agent can retry with the same one-time secret.
 */
import {
  DESIRED_STREAM,
  agentConsumerName,
  agentInboxPrefix,
  agentNatsUser,
  type AgentCredentials,
} from '@flotilla/api';
import type { Principal } from '../auth/tokens.js';
import type { Tx } from '../db/client.js';
import { HubError } from '../errors.js';
import type { AgentConsumers } from '../nats/agent-consumers.js';
import { bcryptHash, newAgentPassword } from '../nats/credentials/passwords.js';
import { recordAudit } from '../repositories/audit-repo.js';
import {
  insertCredential,
  markCredentialsIssued,
  revokeCredentials,
  type ClusterRow,
} from '../repositories/clusters-repo.js';
import type { CredentialSync } from './credential-sync.js';

export interface CredentialIssuerDeps {
  syncCredentials: CredentialSync;
  /** The agents' durables on the DESIRED stream (the hub creates and deletes them). */
  consumers: Pick<AgentConsumers, 'ensure'>;
  natsPublicUrls: string[];
  bcryptCost: number;
}

/** Issues new credentials in `tx`, audited as `action`; returns them (the password, once). */
export async function issueCredentials(
  deps: CredentialIssuerDeps,
  tx: Tx,
  actor: Principal,
  row: ClusterRow,
  action: string,
): Promise<AgentCredentials> {
  if (row.state !== 'accepted') {
    throw new HubError('HUB_ERR_CLUSTER_NOT_ACCEPTED', `cluster ${row.name} is ${row.state}, not accepted`);
  }
  const password = newAgentPassword();
  const user = agentNatsUser(row.name);
  await revokeCredentials(tx, row.name);
  await insertCredential(tx, {
    clusterName: row.name,
    natsUser: user,
    passwordHash: await bcryptHash(password, deps.bcryptCost),
  });
  await markCredentialsIssued(tx, row.name);
  await recordAudit(tx, { actor: actor.name, action, targetType: 'cluster', targetId: row.name, details: { user } });
  // Before commit: the agent pulls from its durable as soon as it has the credentials.
  await deps.consumers.ensure(row.name).catch((cause: unknown) => {
    throw new HubError('HUB_ERR_UNAVAILABLE', `cannot create the NATS consumer of cluster ${row.name}`, { cause });
  });
  await deps.syncCredentials(tx);
  return {
    cluster: row.name,
    nats: {
      servers: deps.natsPublicUrls,
      user,
      password,
      inboxPrefix: agentInboxPrefix(row.name),
      desiredStream: DESIRED_STREAM,
      consumer: agentConsumerName(row.name),
    },
  };
}
