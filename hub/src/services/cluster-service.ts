/**
 * Cluster lifecycle. Registration is double opt-in: an agent registers with a bootstrap token
 * (→ pending, and gets a one-time registration secret), an operator accepts, then the agent
 * claims its NATS credentials once with that secret (cluster-credentials.ts). Relabel, accept and
 * removal recompute the cluster's desired state in the same transaction.
 */
import type {
  AgentCredentials,
  Cluster,
  ClusterList,
  ClusterListQuery,
  RegisterClusterRequest,
  RegisterClusterResponse,
} from '@flotilla/api';
import { agentConsumerName } from '@flotilla/api';
import { newSecret, secretMatches, sha256, type Principal } from '../auth/tokens.js';
import type { Db, Tx } from '../db/client.js';
import { labelProblems, selectorParam } from '../domain/label-selector.js';
import { paginate } from '../domain/pagination.js';
import { HubError, conflict, invalid, notFound } from '../errors.js';
import { recordAudit } from '../repositories/audit-repo.js';
import {
  acceptCluster,
  getCluster,
  listClusters,
  markClusterRemoved,
  revokeCredentials,
  saveRegistration,
  setClusterLabels,
  toApiCluster,
  type ClusterRow,
} from '../repositories/clusters-repo.js';
import { issueCredentials, type CredentialIssuerDeps } from './cluster-credentials.js';
import type { DesiredChanges } from './desired-sync.js';
import type { RegistrationGuard } from './registration-guard.js';

export interface ClusterServiceDeps extends CredentialIssuerDeps {
  db: Db;
  /** Desired-state changes and the transactions that make them (outbox rows reach the relay). */
  desired: DesiredChanges;
  /** The agents' durables on the DESIRED stream (the hub creates and deletes them). */
  consumers: CredentialIssuerDeps['consumers'] & { remove(name: string): Promise<boolean> };
  /** Called after a cluster was accepted or removed (the NATS link reconciler runs a pass). */
  onLinkChange: () => void;
  /** Registration limits: checked first in each registration's transaction; stale ones expire first on accept. */
  registrationGuard?: Pick<RegistrationGuard, 'admit' | 'expireStale'>;
  heartbeatTimeoutMs: number;
  now: () => Date;
}

export interface ClusterService {
  register(actor: Principal, body: RegisterClusterRequest): Promise<RegisterClusterResponse>;
  accept(actor: Principal, name: string): Promise<Cluster>;
  /**
   * A claim for an unknown, removed or expired cluster and one with the wrong secret get the same
   * answer (HUB_ERR_REGISTRATION_REFUSED), so a bootstrap token cannot probe which cluster names
   * exist; its code tells an agent that its registration is gone and it should register again.
   */
  claim(actor: Principal, name: string, registrationSecret: string): Promise<AgentCredentials>;
  rotate(actor: Principal, name: string): Promise<AgentCredentials>;
  setLabels(actor: Principal, name: string, labels: Record<string, string>): Promise<Cluster>;
  remove(actor: Principal, name: string): Promise<void>;
  list(query: ClusterListQuery): Promise<ClusterList>;
  get(name: string): Promise<Cluster>;
}

/** Cluster labels are validated as Kubernetes validates labels; each problem names the label. */
function assertLabels(labels: Record<string, string>): void {
  const problems = labelProblems(labels, 'labels');
  if (problems.length > 0) throw invalid('invalid cluster labels', problems);
}

/** The cluster's row, locked for the transaction; unknown or removed is a 404. */
async function liveCluster(tx: Tx, name: string): Promise<ClusterRow> {
  const row = await getCluster(tx, name, true);
  if (!row || row.state === 'removed') throw notFound(`cluster ${name}`);
  return row;
}

async function register(deps: ClusterServiceDeps, actor: Principal, body: RegisterClusterRequest, secret: string) {
  return deps.db.transaction(async (tx) => {
    await deps.registrationGuard?.admit(tx, actor);
    const existing = await getCluster(tx, body.name, true);
    if (existing && existing.state !== 'removed') throw conflict(`cluster ${body.name} is already registered`);
    const labels = body.labels ?? {};
    const saved = await saveRegistration(
      tx,
      {
        name: body.name,
        labels,
        registrationSecretHash: sha256(secret),
        registeredBy: actor.name,
        agentVersion: body.agentVersion ?? null,
        kubernetesVersion: body.kubernetesVersion ?? null,
      },
      existing !== undefined,
    );
    await recordAudit(tx, {
      actor: actor.name,
      action: 'cluster.register',
      targetType: 'cluster',
      targetId: body.name,
      details: { labels, reRegistered: existing !== undefined },
    });
    return saved;
  });
}

/**
 * A change of a live cluster that recomputes its desired state, in one transaction: the
 * desired-state lock, the cluster's row, the change (undefined: nothing to do), the sync of its
 * objects and the audit entry (`details` gets the number of objects changed).
 */
async function changeCluster(
  deps: ClusterServiceDeps,
  actor: Principal,
  name: string,
  change: (
    tx: Tx,
    c: ClusterRow,
  ) => Promise<
    { saved: ClusterRow; action: string; details: (changed: number) => Record<string, unknown> } | undefined
  >,
): Promise<ClusterRow> {
  return deps.desired.transaction(async (tx) => {
    await deps.desired.lock(tx);
    const c = await liveCluster(tx, name);
    const done = await change(tx, c);
    if (!done) return c;
    const changed = await deps.desired.syncCluster(tx, done.saved);
    await recordAudit(tx, {
      actor: actor.name,
      action: done.action,
      targetType: 'cluster',
      targetId: name,
      details: done.details(changed),
    });
    return done.saved;
  });
}

async function accept(deps: ClusterServiceDeps, actor: Principal, name: string): Promise<ClusterRow> {
  // A registration past its TTL must not be accepted: the agent registers again instead.
  await deps.registrationGuard?.expireStale(deps.db);
  const row = await changeCluster(deps, actor, name, async (tx, c) =>
    c.state === 'accepted'
      ? undefined
      : {
          saved: await acceptCluster(tx, name, actor.name),
          action: 'cluster.accept',
          details: (changed) => ({ objectsChanged: changed }),
        },
  );
  deps.onLinkChange();
  return row;
}

async function remove(deps: ClusterServiceDeps, actor: Principal, name: string): Promise<void> {
  await changeCluster(deps, actor, name, async (tx) => {
    const saved = await markClusterRemoved(tx, name);
    await revokeCredentials(tx, name);
    return { saved, action: 'cluster.remove', details: (changed) => ({ objectsTombstoned: changed }) };
  });
  // Should either step fail (NATS down), the reconciler's pass retries it.
  deps.onLinkChange();
  await deps.syncCredentials();
  await deps.consumers.remove(agentConsumerName(name));
}

async function claim(deps: ClusterServiceDeps, actor: Principal, name: string, secret: string) {
  return deps.db.transaction(async (tx) => {
    const c = await liveCluster(tx, name);
    if (!secretMatches(secret, c.registrationSecretHash)) {
      throw new HubError('HUB_ERR_FORBIDDEN', `wrong registration secret for cluster ${name}`);
    }
    if (c.credentialsIssued) {
      throw new HubError('HUB_ERR_CREDENTIALS_CLAIMED', `credentials of cluster ${name} were already issued`);
    }
    return issueCredentials(deps, tx, actor, c, 'cluster.credentials.claim');
  });
}

/** See ClusterService.claim. */
function uniformClaimRefusal(err: unknown): never {
  if (err instanceof HubError && (err.code === 'HUB_ERR_NOT_FOUND' || err.code === 'HUB_ERR_FORBIDDEN')) {
    throw new HubError('HUB_ERR_REGISTRATION_REFUSED', 'no registration matches this cluster name and secret');
  }
  throw err;
}

export function createClusterService(deps: ClusterServiceDeps): ClusterService {
  const view = (row: ClusterRow): Cluster => toApiCluster(row, deps.now(), deps.heartbeatTimeoutMs);
  return {
    async register(actor, body) {
      assertLabels(body.labels ?? {});
      const secret = newSecret('flreg');
      return { cluster: view(await register(deps, actor, body, secret)), registrationSecret: secret };
    },
    accept: async (actor, name) => view(await accept(deps, actor, name)),
    claim: (actor, name, secret) => claim(deps, actor, name, secret).catch(uniformClaimRefusal),
    rotate: (actor, name) =>
      deps.db.transaction(async (tx) => {
        const c = await getCluster(tx, name, true);
        if (!c) throw notFound(`cluster ${name}`);
        return issueCredentials(deps, tx, actor, c, 'cluster.credentials.rotate');
      }),
    async setLabels(actor, name, labels) {
      assertLabels(labels);
      const row = await changeCluster(deps, actor, name, async (tx, c) => ({
        saved: await setClusterLabels(tx, name, labels),
        action: 'cluster.labels',
        details: (changed) => ({ from: c.labels, to: labels, objectsChanged: changed }),
      }));
      return view(row);
    },
    remove: (actor, name) => remove(deps, actor, name),
    list(q) {
      const now = deps.now();
      return paginate(
        q,
        ['string'],
        (after, limit) => {
          const selector = selectorParam(q.labelSelector);
          return listClusters(deps.db, {
            ...(selector ? { selector } : {}),
            ...(q.health ? { health: q.health } : {}),
            ...(after ? { after: after[0] } : {}),
            limit,
            now,
            heartbeatTimeoutMs: deps.heartbeatTimeoutMs,
          });
        },
        (r) => [r.name],
        (r) => toApiCluster(r, now, deps.heartbeatTimeoutMs),
      );
    },
    async get(name) {
      const row = await getCluster(deps.db, name);
      if (!row) throw notFound(`cluster ${name}`);
      return view(row);
    },
  };
}
