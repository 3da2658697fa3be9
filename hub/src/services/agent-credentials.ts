/**
 * An accepted cluster's NATS credentials (docs/adr/0012-nats-decentralized-auth.md): the hub
 * pushes the cluster's account, makes sure its durable exists and signs a user JWT for the
 * agent's public key, all before the caller's transaction commits (a failure rolls it back and
 * the agent retries). Claim, renew and re-key are signed by the agent's key; every refusal of a
 * signed request is the same 403, so a caller learns nothing about clusters or keys.
 */
import {
  AGENT_JS_API_PREFIX,
  DESIRED_STREAM,
  agentConsumerName,
  agentInboxPrefix,
  verifySignedRequest,
  type AgentCredentials,
  type SignedRequestParts,
} from '@flotilla/api';
import type { Principal } from '../auth/tokens.js';
import type { Tx } from '../db/client.js';
import { lockClusterCredentials } from '../db/locks.js';
import { revokeUserKey, type ClusterAccount } from '../domain/cluster-account.js';
import { HubError } from '../errors.js';
import type { AgentConsumers } from '../nats/agent-consumers.js';
import type { NatsAccountIssuer } from '../nats/auth/issuer.js';
import { recordAudit } from '../repositories/audit-repo.js';
import { updateIdentity, type ClusterRow } from '../repositories/clusters-repo.js';

export interface CredentialIssuerDeps {
  /** Undefined: the hub has no signing keys (FLOTILLA_NATS_* unset); credential requests get 503. */
  accounts: NatsAccountIssuer | undefined;
  /** The agents' durables on the DESIRED stream (the hub creates and deletes them). */
  consumers: Pick<AgentConsumers, 'ensure'>;
  natsPublicUrls: string[];
  credentialTtlSeconds: number;
  now: () => Date;
}

/** A request as the route saw it: what the signature must cover, and the signature header. */
export interface SignedCall extends SignedRequestParts {
  signature: string | undefined;
}

const refused = (): HubError => new HubError('HUB_ERR_FORBIDDEN', 'the request is not signed by the cluster’s key');

function issuer(deps: CredentialIssuerDeps): NatsAccountIssuer {
  if (!deps.accounts)
    throw new HubError('HUB_ERR_UNAVAILABLE', 'this hub issues no NATS credentials (no signing keys)');
  return deps.accounts;
}

/** Checks the signature against the cluster's stored key; returns the request's `ts` (ms). */
export function verifyAgentCall(deps: Pick<CredentialIssuerDeps, 'now'>, row: ClusterRow, call: SignedCall): number {
  if (!row.agentPublicKey || row.state !== 'accepted') throw refused();
  const check = verifySignedRequest(call.signature, call, {
    publicKey: row.agentPublicKey,
    lastTs: row.lastSignedRequestMs,
    now: deps.now().getTime(),
  });
  if (!check.ok) throw refused();
  return check.ts;
}

export function accountOf(row: ClusterRow, accountKey: string): ClusterAccount {
  return { cluster: row.name, accountKey, revocations: row.revokedKeys };
}

/**
 * Issues a user JWT for the cluster's current key in `tx`, audited as `action`: the account
 * (created on first use) is pushed and the durable ensured before the transaction commits.
 */
export async function issueCredentials(
  deps: CredentialIssuerDeps,
  tx: Tx,
  call: { actor: string; row: ClusterRow; action: string; signedAtMs: number },
): Promise<AgentCredentials> {
  const { row } = call;
  const accounts = issuer(deps);
  if (row.state !== 'accepted' || !row.agentPublicKey) {
    throw new HubError('HUB_ERR_CLUSTER_NOT_ACCEPTED', `cluster ${row.name} is ${row.state}, not accepted`);
  }
  // One change per cluster at a time, none beside the link reconciler's account sync.
  await lockClusterCredentials(tx, row.name);
  const account = accountOf(row, row.accountPublicKey ?? accounts.newAccountKey());
  const unavailable = (what: string) => (cause: unknown) => {
    throw new HubError('HUB_ERR_UNAVAILABLE', `cannot ${what} of cluster ${row.name}`, { cause });
  };
  await accounts.pushAccount(account).catch(unavailable('push the NATS account'));
  // Before commit: the agent pulls from its durable as soon as it has the credentials.
  await deps.consumers.ensure(row.name).catch(unavailable('create the NATS consumer'));
  const user = await accounts.signUser(account, row.agentPublicKey);
  await updateIdentity(tx, row.name, {
    accountPublicKey: account.accountKey,
    credentialId: user.id,
    credentialExpiresAt: user.expiresAt,
    credentialsIssued: true,
    lastSignedRequestMs: call.signedAtMs,
  });
  await recordAudit(tx, {
    actor: call.actor,
    action: call.action,
    targetType: 'cluster',
    targetId: row.name,
    details: { publicKey: row.agentPublicKey, credentialId: user.id, expiresAt: user.expiresAt.toISOString() },
  });
  return {
    cluster: row.name,
    nats: {
      servers: deps.natsPublicUrls,
      jwt: user.jwt,
      expiresAt: user.expiresAt.toISOString(),
      inboxPrefix: agentInboxPrefix(row.name),
      apiPrefix: AGENT_JS_API_PREFIX,
      desiredStream: DESIRED_STREAM,
      consumer: agentConsumerName(row.name),
    },
  };
}

/**
 * Revokes the cluster's current key in its account (re-key, or an admin forcing one) and stores
 * `nextKey` (null: none; the cluster must register again). Pushed before the transaction commits.
 */
export async function revokeAgentKey(
  deps: CredentialIssuerDeps,
  tx: Tx,
  row: ClusterRow,
  nextKey: string | null,
): Promise<ClusterRow> {
  const accounts = issuer(deps);
  await lockClusterCredentials(tx, row.name);
  const nowSeconds = Math.floor(deps.now().getTime() / 1000);
  const revokedKeys = row.agentPublicKey
    ? revokeUserKey(row.revokedKeys, row.agentPublicKey, nowSeconds, deps.credentialTtlSeconds)
    : row.revokedKeys;
  const saved = await updateIdentity(tx, row.name, {
    agentPublicKey: nextKey,
    revokedKeys,
    ...(nextKey ? {} : { credentialsIssued: false }),
  });
  if (saved.accountPublicKey) {
    await accounts.pushAccount(accountOf(saved, saved.accountPublicKey)).catch((cause: unknown) => {
      throw new HubError('HUB_ERR_UNAVAILABLE', `cannot push the NATS account of cluster ${row.name}`, { cause });
    });
  }
  return saved;
}

/** The actor of a signed agent request in the audit log. */
export function agentActor(cluster: string): Principal['name'] {
  return `agent:${cluster}`;
}
