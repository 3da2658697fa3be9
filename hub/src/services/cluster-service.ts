/**
 * Cluster lifecycle. Registration is double opt-in: an agent registers with a bootstrap token and
 * its public key (→ pending, and gets a one-time registration secret), an operator accepts, then
 * the agent claims its NATS credentials once with that secret and a request signed by its key,
 * renews them and re-keys with signed requests (agent-credentials.ts). Relabel, accept and
 * removal recompute the cluster's desired state in the same transaction.
 */
import type {
  AgentCredentials,
  Cluster,
  ClusterList,
  ClusterListQuery,
  RegisterClusterRequest,
  RegisterClusterResponse,
  SetPrometheusRequest,
} from '@flotilla/api';
import {
  agentConsumerName,
  validateMaintenanceWindows,
  validatePrometheusConnection,
  type MaintenanceWindow,
} from '@flotilla/api';
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
  saveRegistration,
  setClusterLabels,
  setMaintenanceWindows,
  setPrometheus,
  toApiCluster,
  type PrometheusColumns,
  type ClusterRow,
} from '../repositories/clusters-repo.js';
import {
  accountOf,
  agentActor,
  issueCredentials,
  revokeAgentKey,
  verifyAgentCall,
  type CredentialIssuerDeps,
  type SignedCall,
} from './agent-credentials.js';
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
  claim(actor: Principal, name: string, registrationSecret: string, call: SignedCall): Promise<AgentCredentials>;
  /** A fresh user JWT for the cluster's key; the signed request is the authentication. */
  renew(name: string, call: SignedCall): Promise<AgentCredentials>;
  /** Revokes the current key and issues a JWT for `publicKey` (the request is signed by the current key). */
  rekey(name: string, publicKey: string, call: SignedCall): Promise<AgentCredentials>;
  /** An admin revokes the agent's key: its connections close; the cluster must register again. */
  revokeKey(actor: Principal, name: string): Promise<Cluster>;
  setLabels(actor: Principal, name: string, labels: Record<string, string>): Promise<Cluster>;
  /** Replaces the windows in which rollouts may start the cluster; each problem names its field. */
  setMaintenanceWindows(actor: Principal, name: string, windows: MaintenanceWindow[]): Promise<Cluster>;
  /** The cluster's Prometheus for metric analysis (docs/adr/0017); null removes it. */
  setPrometheus(actor: Principal, name: string, req: SetPrometheusRequest): Promise<Cluster>;
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

/** Windows change no desired state (the scheduler reads them each tick): the row and an audit entry. */
function saveWindows(deps: ClusterServiceDeps, actor: Principal, name: string, windows: MaintenanceWindow[]) {
  return deps.db.transaction(async (tx) => {
    const c = await liveCluster(tx, name);
    const saved = await setMaintenanceWindows(tx, name, windows);
    await recordAudit(tx, {
      actor: actor.name,
      action: 'cluster.maintenanceWindows',
      targetType: 'cluster',
      targetId: name,
      details: { from: c.maintenanceWindows, to: windows },
    });
    return saved;
  });
}

/**
 * Like windows: the row and an audit entry; the analysis runner reads the URL each measurement.
 * Only file references are stored and audited, never what the files hold.
 */
function savePrometheus(deps: ClusterServiceDeps, actor: Principal, name: string, req: SetPrometheusRequest) {
  const to: PrometheusColumns = {
    prometheusUrl: req.url,
    prometheusTokenRef: req.tokenRef ?? null,
    prometheusUsernameRef: req.basicAuth?.usernameRef ?? null,
    prometheusPasswordRef: req.basicAuth?.passwordRef ?? null,
    prometheusCaRef: req.caRef ?? null,
  };
  return deps.db.transaction(async (tx) => {
    const c = await liveCluster(tx, name);
    const saved = await setPrometheus(tx, name, to);
    const from: PrometheusColumns = {
      prometheusUrl: c.prometheusUrl,
      prometheusTokenRef: c.prometheusTokenRef,
      prometheusUsernameRef: c.prometheusUsernameRef,
      prometheusPasswordRef: c.prometheusPasswordRef,
      prometheusCaRef: c.prometheusCaRef,
    };
    await recordAudit(tx, {
      actor: actor.name,
      action: 'cluster.prometheus',
      targetType: 'cluster',
      targetId: name,
      details: { from, to },
    });
    return saved;
  });
}

async function register(deps: ClusterServiceDeps, actor: Principal, body: RegisterClusterRequest, secret: string) {
  return deps.db.transaction(async (tx) => {
    await deps.registrationGuard?.admit(tx, actor);
    const existing = await getCluster(tx, body.name, true);
    // A cluster whose key an admin revoked registers again like a removed one.
    if (existing && existing.state !== 'removed' && existing.agentPublicKey !== null) {
      throw conflict(`cluster ${body.name} is already registered`);
    }
    const labels = body.labels ?? {};
    const saved = await saveRegistration(
      tx,
      {
        name: body.name,
        labels,
        registrationSecretHash: sha256(secret),
        registeredBy: actor.name,
        agentPublicKey: body.publicKey,
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
  const removed = await changeCluster(deps, actor, name, async (tx) => {
    const saved = await markClusterRemoved(tx, name);
    return { saved, action: 'cluster.remove', details: (changed) => ({ objectsTombstoned: changed }) };
  });
  // Should either step fail (NATS down), the reconciler's pass retries it.
  deps.onLinkChange();
  if (deps.accounts && removed.accountPublicKey) {
    await deps.accounts.removeAccount(accountOf(removed, removed.accountPublicKey));
  }
  await deps.consumers.remove(agentConsumerName(name));
}

async function claim(deps: ClusterServiceDeps, actor: Principal, name: string, secret: string, call: SignedCall) {
  return deps.db.transaction(async (tx) => {
    const c = await liveCluster(tx, name);
    if (!secretMatches(secret, c.registrationSecretHash)) {
      throw new HubError('HUB_ERR_FORBIDDEN', `wrong registration secret for cluster ${name}`);
    }
    if (c.credentialsIssued) {
      throw new HubError('HUB_ERR_CREDENTIALS_CLAIMED', `credentials of cluster ${name} were already issued`);
    }
    if (c.state !== 'accepted') {
      throw new HubError('HUB_ERR_CLUSTER_NOT_ACCEPTED', `cluster ${name} is ${c.state}, not accepted`);
    }
    const signedAtMs = verifyAgentCall(deps, c, call);
    return issueCredentials(deps, tx, { actor: actor.name, row: c, action: 'cluster.credentials.claim', signedAtMs });
  });
}

/** Renew or re-key: the cluster's row locked, the signature checked, then `issue`. */
async function signedChange(
  deps: ClusterServiceDeps,
  name: string,
  call: SignedCall,
  issue: (tx: Tx, row: ClusterRow, signedAtMs: number) => Promise<AgentCredentials>,
): Promise<AgentCredentials> {
  try {
    return await deps.db.transaction(async (tx) => {
      const row = await getCluster(tx, name, true);
      if (!row) throw new HubError('HUB_ERR_FORBIDDEN', 'unknown cluster');
      return issue(tx, row, verifyAgentCall(deps, row, call));
    });
  } catch (err) {
    // One answer for an unknown cluster, a wrong key or signature, a replay, a removed cluster.
    if (err instanceof HubError && ['HUB_ERR_FORBIDDEN', 'HUB_ERR_CLUSTER_NOT_ACCEPTED'].includes(err.code)) {
      throw new HubError('HUB_ERR_FORBIDDEN', 'the request is not signed by the cluster’s key');
    }
    throw err;
  }
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
    claim: (actor, name, secret, call) => claim(deps, actor, name, secret, call).catch(uniformClaimRefusal),
    renew: (name, call) =>
      signedChange(deps, name, call, (tx, row, signedAtMs) =>
        issueCredentials(deps, tx, { actor: agentActor(name), row, action: 'cluster.credentials.renew', signedAtMs }),
      ),
    rekey: (name, publicKey, call) =>
      signedChange(deps, name, call, async (tx, row, signedAtMs) => {
        const saved = await revokeAgentKey(deps, tx, row, publicKey);
        return issueCredentials(deps, tx, {
          actor: agentActor(name),
          row: saved,
          action: 'cluster.credentials.rekey',
          signedAtMs,
        });
      }),
    revokeKey: (actor, name) =>
      deps.db.transaction(async (tx) => {
        const c = await liveCluster(tx, name);
        const saved = await revokeAgentKey(deps, tx, c, null);
        await recordAudit(tx, {
          actor: actor.name,
          action: 'cluster.credentials.revoke',
          targetType: 'cluster',
          targetId: name,
          details: { publicKey: c.agentPublicKey },
        });
        return view(saved);
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
    async setMaintenanceWindows(actor, name, windows) {
      const problems = validateMaintenanceWindows(windows);
      if (problems.length > 0) throw invalid('invalid maintenance windows', problems);
      return view(await saveWindows(deps, actor, name, windows));
    },
    async setPrometheus(actor, name, req) {
      const problems = validatePrometheusConnection(req);
      if (problems.length > 0) throw invalid('invalid Prometheus settings', problems);
      return view(await savePrometheus(deps, actor, name, req));
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
