/**
 * Cluster lifecycle. Registration is double opt-in: an agent registers with a bootstrap token
 * (→ pending, and gets a one-time registration secret), an operator accepts, then the agent
 * claims its NATS credentials once with that secret. Relabel, accept and removal recompute the
 * cluster's desired state in the same transaction.
 *
 * A claim (or rotation) is all or nothing for the agent: the cluster's durable is created and
 * nats-server given the new identity before the transaction commits, so when either fails the
 * claim is rolled back and can be retried with the same one-time secret.
 */
import {
  DESIRED_STREAM,
  agentConsumerName,
  agentInboxPrefix,
  agentNatsUser,
  type AgentCredentials,
  type Cluster,
  type RegisterClusterRequest,
  type RegisterClusterResponse,
} from '@flotilla/api';
import { eq, sql } from 'drizzle-orm';
import { newSecret, secretMatches, sha256 } from '../auth/tokens.js';
import type { Db, Tx } from '../db/client.js';
import { clusters } from '../db/schema/index.js';
import { HubError, conflict, notFound } from '../errors.js';
import { bcryptHash, newAgentPassword } from '../nats/credentials/passwords.js';
import { recordAudit } from '../repositories/audit-repo.js';
import {
  getCluster,
  insertCredential,
  revokeCredentials,
  toApiCluster,
  type ClusterRow,
} from '../repositories/clusters-repo.js';
import type { Principal } from '../repositories/tokens-repo.js';
import type { AgentConsumers } from '../nats/agent-consumers.js';
import type { CredentialSync } from './credential-sync.js';
import type { DesiredChanges } from './desired-sync.js';
import type { RegistrationGuard } from './registration-guard.js';

export interface ClusterServiceDeps {
  db: Db;
  /** Desired-state changes and the transactions that make them (outbox rows reach the relay). */
  desired: DesiredChanges;
  syncCredentials: CredentialSync;
  /** The agents' durables on the DESIRED stream (the hub creates and deletes them). */
  consumers: Pick<AgentConsumers, 'ensure' | 'remove'>;
  /** Called after a cluster was accepted or removed (the NATS link reconciler runs a pass). */
  onLinkChange: () => void;
  /** Registration limits, checked first in each registration's transaction. */
  registrationGuard?: Pick<RegistrationGuard, 'admit'>;
  natsPublicUrls: string[];
  bcryptCost: number;
  heartbeatTimeoutMs: number;
  now: () => Date;
}

export interface ClusterService {
  register(actor: Principal, body: RegisterClusterRequest): Promise<RegisterClusterResponse>;
  accept(actor: Principal, name: string): Promise<Cluster>;
  claim(actor: Principal, name: string, registrationSecret: string): Promise<AgentCredentials>;
  rotate(actor: Principal, name: string): Promise<AgentCredentials>;
  setLabels(actor: Principal, name: string, labels: Record<string, string>): Promise<Cluster>;
  remove(actor: Principal, name: string): Promise<void>;
}

export function createClusterService(deps: ClusterServiceDeps): ClusterService {
  const { db, desired } = deps;
  const view = (row: ClusterRow): Cluster => toApiCluster(row, deps.now(), deps.heartbeatTimeoutMs);

  async function mustGet(tx: Tx, name: string): Promise<ClusterRow> {
    const row = await getCluster(tx, name, true);
    if (!row) throw notFound(`cluster ${name}`);
    return row;
  }

  /** New NATS password for an accepted cluster: old ones revoked, only a bcrypt hash kept. */
  async function issue(tx: Tx, actor: Principal, row: ClusterRow, action: string): Promise<AgentCredentials> {
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
    await tx
      .update(clusters)
      .set({ credentialsIssued: true, updatedAt: new Date() })
      .where(eq(clusters.name, row.name));
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

  return {
    async register(actor, body) {
      const secret = newSecret('flreg');
      const row = await db.transaction(async (tx) => {
        await deps.registrationGuard?.admit(tx, actor);
        const existing = await getCluster(tx, body.name, true);
        if (existing && existing.state !== 'removed') throw conflict(`cluster ${body.name} is already registered`);
        const values = {
          labels: body.labels ?? {},
          state: 'pending' as const,
          registrationSecretHash: sha256(secret),
          registeredBy: actor.name,
          registeredAt: new Date(),
          acceptedAt: null,
          acceptedBy: null,
          removedAt: null,
          credentialsIssued: false,
          agentVersion: body.agentVersion ?? null,
          kubernetesVersion: body.kubernetesVersion ?? null,
          lastHeartbeatAt: null,
          updatedAt: new Date(),
        };
        const [saved] = existing
          ? await tx.update(clusters).set(values).where(eq(clusters.name, body.name)).returning()
          : await tx
              .insert(clusters)
              .values({ name: body.name, ...values })
              .returning();
        await recordAudit(tx, {
          actor: actor.name,
          action: 'cluster.register',
          targetType: 'cluster',
          targetId: body.name,
          details: { labels: values.labels, reRegistered: existing !== undefined },
        });
        return saved!;
      });
      return { cluster: view(row), registrationSecret: secret };
    },

    async accept(actor, name) {
      const row = await desired.transaction(async (tx) => {
        await desired.lock(tx);
        const c = await mustGet(tx, name);
        if (c.state === 'removed') throw notFound(`cluster ${name}`);
        if (c.state === 'accepted') return c;
        const [saved] = await tx
          .update(clusters)
          .set({ state: 'accepted', acceptedAt: new Date(), acceptedBy: actor.name, updatedAt: new Date() })
          .where(eq(clusters.name, name))
          .returning();
        const changed = await desired.syncCluster(tx, saved!);
        await recordAudit(tx, {
          actor: actor.name,
          action: 'cluster.accept',
          targetType: 'cluster',
          targetId: name,
          details: { objectsChanged: changed },
        });
        return saved!;
      });
      deps.onLinkChange();
      return view(row);
    },

    async claim(actor, name, registrationSecret) {
      return db.transaction(async (tx) => {
        const c = await mustGet(tx, name);
        if (c.state === 'removed') throw notFound(`cluster ${name}`);
        if (!secretMatches(registrationSecret, c.registrationSecretHash)) {
          throw new HubError('HUB_ERR_FORBIDDEN', `wrong registration secret for cluster ${name}`);
        }
        if (c.credentialsIssued) {
          throw new HubError('HUB_ERR_CREDENTIALS_CLAIMED', `credentials of cluster ${name} were already issued`);
        }
        return issue(tx, actor, c, 'cluster.credentials.claim');
      });
    },

    async rotate(actor, name) {
      return db.transaction(async (tx) => issue(tx, actor, await mustGet(tx, name), 'cluster.credentials.rotate'));
    },

    async setLabels(actor, name, labels) {
      const row = await desired.transaction(async (tx) => {
        await desired.lock(tx);
        const c = await mustGet(tx, name);
        if (c.state === 'removed') throw notFound(`cluster ${name}`);
        const [saved] = await tx
          .update(clusters)
          .set({ labels, updatedAt: new Date() })
          .where(eq(clusters.name, name))
          .returning();
        const changed = await desired.syncCluster(tx, saved!);
        await recordAudit(tx, {
          actor: actor.name,
          action: 'cluster.labels',
          targetType: 'cluster',
          targetId: name,
          details: { from: c.labels, to: labels, objectsChanged: changed },
        });
        return saved!;
      });
      return view(row);
    },

    async remove(actor, name) {
      await desired.transaction(async (tx) => {
        await desired.lock(tx);
        const c = await mustGet(tx, name);
        if (c.state === 'removed') throw notFound(`cluster ${name}`);
        const [saved] = await tx
          .update(clusters)
          .set({ state: 'removed', removedAt: sql`now()`, credentialsIssued: false, updatedAt: new Date() })
          .where(eq(clusters.name, name))
          .returning();
        await revokeCredentials(tx, name);
        const changed = await desired.syncCluster(tx, saved!);
        await recordAudit(tx, {
          actor: actor.name,
          action: 'cluster.remove',
          targetType: 'cluster',
          targetId: name,
          details: { objectsTombstoned: changed },
        });
      });
      // Should either step fail (NATS down), the reconciler's pass retries it.
      deps.onLinkChange();
      await deps.syncCredentials();
      await deps.consumers.remove(agentConsumerName(name));
    },
  };
}
