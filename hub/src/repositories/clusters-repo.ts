/** Clusters: registration and membership, heartbeats and link state, and their NATS identity. */
import { and, asc, count, eq, gt, isNotNull, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Cluster, ClusterHealth, LabelSelector, MaintenanceWindow } from '@flotilla/api';
import type { DbOrTx } from '../db/client.js';
import { clusters } from '../db/schema/index.js';
import type { ClusterAccount } from '../domain/cluster-account.js';
import { clusterHealth } from '../domain/cluster-health.js';
import type { LinkState } from '../domain/link-republish.js';
import { selectorSql } from './label-sql.js';

export type ClusterRow = typeof clusters.$inferSelect;

export function toApiCluster(row: ClusterRow, now: Date, heartbeatTimeoutMs: number): Cluster {
  return {
    name: row.name,
    labels: row.labels,
    state: row.state,
    health: clusterHealth(row.state, row.lastHeartbeatAt, now, heartbeatTimeoutMs),
    agentVersion: row.agentVersion,
    kubernetesVersion: row.kubernetesVersion,
    lastHeartbeatAt: row.lastHeartbeatAt?.toISOString() ?? null,
    registeredAt: row.registeredAt.toISOString(),
    acceptedAt: row.acceptedAt?.toISOString() ?? null,
    credentialsIssued: row.credentialsIssued,
    publicKey: row.agentPublicKey,
    credentialExpiresAt: row.credentialExpiresAt?.toISOString() ?? null,
    maintenanceWindows: row.maintenanceWindows,
    prometheusUrl: row.prometheusUrl,
    prometheusTokenRef: row.prometheusTokenRef,
    prometheusBasicAuth:
      row.prometheusUsernameRef && row.prometheusPasswordRef
        ? { usernameRef: row.prometheusUsernameRef, passwordRef: row.prometheusPasswordRef }
        : null,
    prometheusCaRef: row.prometheusCaRef,
  };
}

export async function getCluster(db: DbOrTx, name: string, forUpdate = false): Promise<ClusterRow | undefined> {
  const q = db.select().from(clusters).where(eq(clusters.name, name)).limit(1);
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

/** What a (re-)registration stores: a pending cluster, as if new. */
export interface Registration {
  name: string;
  labels: Record<string, string>;
  registrationSecretHash: string;
  registeredBy: string;
  /** The agent's user nkey public key. */
  agentPublicKey: string;
  agentVersion: string | null;
  kubernetesVersion: string | null;
}

/**
 * Stores a registration: a new row, or a removed cluster's row reset to pending (`reRegister`),
 * everything from its earlier life (acceptance, credentials, heartbeats) cleared.
 */
export async function saveRegistration(db: DbOrTx, r: Registration, reRegister: boolean): Promise<ClusterRow> {
  const values = {
    ...r,
    state: 'pending' as const,
    registeredAt: new Date(),
    acceptedAt: null,
    acceptedBy: null,
    removedAt: null,
    credentialsIssued: false,
    accountPublicKey: null,
    revokedKeys: {},
    credentialId: null,
    credentialExpiresAt: null,
    lastSignedRequestMs: 0,
    lastHeartbeatAt: null,
    updatedAt: new Date(),
  };
  const [saved] = reRegister
    ? await db.update(clusters).set(values).where(eq(clusters.name, r.name)).returning()
    : await db.insert(clusters).values(values).returning();
  return saved!;
}

export async function acceptCluster(db: DbOrTx, name: string, acceptedBy: string): Promise<ClusterRow> {
  const [saved] = await db
    .update(clusters)
    .set({ state: 'accepted', acceptedAt: new Date(), acceptedBy, updatedAt: new Date() })
    .where(eq(clusters.name, name))
    .returning();
  return saved!;
}

export async function setClusterLabels(db: DbOrTx, name: string, labels: Record<string, string>): Promise<ClusterRow> {
  const [saved] = await db
    .update(clusters)
    .set({ labels, updatedAt: new Date() })
    .where(eq(clusters.name, name))
    .returning();
  return saved!;
}

export async function setMaintenanceWindows(
  db: DbOrTx,
  name: string,
  maintenanceWindows: MaintenanceWindow[],
): Promise<ClusterRow> {
  const [saved] = await db
    .update(clusters)
    .set({ maintenanceWindows, updatedAt: new Date() })
    .where(eq(clusters.name, name))
    .returning();
  return saved!;
}

/** A cluster's Prometheus as stored: the URL and file references only (docs/adr/0017). */
export type PrometheusColumns = Pick<
  ClusterRow,
  'prometheusUrl' | 'prometheusTokenRef' | 'prometheusUsernameRef' | 'prometheusPasswordRef' | 'prometheusCaRef'
>;

export async function setPrometheus(db: DbOrTx, name: string, prometheus: PrometheusColumns): Promise<ClusterRow> {
  const [saved] = await db
    .update(clusters)
    .set({ ...prometheus, updatedAt: new Date() })
    .where(eq(clusters.name, name))
    .returning();
  return saved!;
}

export async function markClusterRemoved(db: DbOrTx, name: string): Promise<ClusterRow> {
  const [saved] = await db
    .update(clusters)
    .set({ state: 'removed', removedAt: sql`now()`, credentialsIssued: false, updatedAt: new Date() })
    .where(eq(clusters.name, name))
    .returning();
  return saved!;
}

export async function markCredentialsIssued(db: DbOrTx, name: string): Promise<void> {
  await db.update(clusters).set({ credentialsIssued: true, updatedAt: new Date() }).where(eq(clusters.name, name));
}

/** Removes pending clusters registered more than `ttlSeconds` ago; returns their names. */
export async function expirePendingClusters(db: DbOrTx, ttlSeconds: number): Promise<string[]> {
  const expired = await db
    .update(clusters)
    .set({ state: 'removed', removedAt: sql`now()`, updatedAt: sql`now()` })
    .where(
      and(eq(clusters.state, 'pending'), lt(clusters.registeredAt, sql`now() - make_interval(secs => ${ttlSeconds})`)),
    )
    .returning({ name: clusters.name });
  return expired.map((e) => e.name);
}

async function countClusters(db: DbOrTx, where: SQL | undefined): Promise<number> {
  const [row] = await db.select({ n: count() }).from(clusters).where(where);
  return row?.n ?? 0;
}

/** Clusters `registeredBy` registered within the last minute. */
export function countRecentRegistrations(db: DbOrTx, registeredBy: string): Promise<number> {
  return countClusters(
    db,
    and(eq(clusters.registeredBy, registeredBy), gt(clusters.registeredAt, sql`now() - interval '1 minute'`)),
  );
}

/** Pending clusters, of one registrant or of all. */
export function countPendingClusters(db: DbOrTx, registeredBy?: string): Promise<number> {
  return countClusters(
    db,
    and(
      registeredBy === undefined ? undefined : eq(clusters.registeredBy, registeredBy),
      eq(clusters.state, 'pending'),
    ),
  );
}

export interface ClusterFilter {
  selector?: LabelSelector;
  health?: ClusterHealth;
  after?: string;
  limit: number;
  now: Date;
  heartbeatTimeoutMs: number;
}

function healthSql(health: ClusterHealth, cutoff: Date): SQL | undefined {
  switch (health) {
    case 'Pending':
      return eq(clusters.state, 'pending');
    case 'Removed':
      return eq(clusters.state, 'removed');
    case 'Online':
      return and(eq(clusters.state, 'accepted'), gt(clusters.lastHeartbeatAt, cutoff));
    case 'Offline':
      return and(
        eq(clusters.state, 'accepted'),
        or(isNull(clusters.lastHeartbeatAt), lt(clusters.lastHeartbeatAt, sql`${cutoff.toISOString()}::timestamptz`)),
      );
  }
}

/** Lists clusters by name; fetches `limit + 1` rows so the caller can tell whether more exist. */
export async function listClusters(db: DbOrTx, f: ClusterFilter): Promise<ClusterRow[]> {
  const cutoff = new Date(f.now.getTime() - f.heartbeatTimeoutMs);
  const where = and(
    f.selector ? selectorSql(clusters.labels, f.selector) : undefined,
    f.health ? healthSql(f.health, cutoff) : undefined,
    f.after !== undefined ? gt(clusters.name, f.after) : undefined,
  );
  return db
    .select()
    .from(clusters)
    .where(where)
    .orderBy(asc(clusters.name))
    .limit(f.limit + 1);
}

/** Every cluster (any state), for placement decisions inside a desired-state transaction. */
export async function allClusters(db: DbOrTx): Promise<ClusterRow[]> {
  return db.select().from(clusters).orderBy(asc(clusters.name));
}

/** What desired-state planning needs of every cluster (a fleet-wide change reads them all). */
export async function clusterPlacements(db: DbOrTx): Promise<Pick<ClusterRow, 'name' | 'labels' | 'state'>[]> {
  return db.select({ name: clusters.name, labels: clusters.labels, state: clusters.state }).from(clusters);
}

/** Names of the accepted clusters (the ones that have an agent durable and identity). */
export async function acceptedClusterNames(db: DbOrTx): Promise<string[]> {
  const rows = await db.select({ name: clusters.name }).from(clusters).where(eq(clusters.state, 'accepted'));
  return rows.map((r) => r.name);
}

/** The NATS accounts of accepted clusters that have one (what the resolver must hold). */
export async function acceptedAccounts(db: DbOrTx): Promise<ClusterAccount[]> {
  const rows = await db
    .select({ cluster: clusters.name, accountKey: clusters.accountPublicKey, revocations: clusters.revokedKeys })
    .from(clusters)
    .where(and(eq(clusters.state, 'accepted'), isNotNull(clusters.accountPublicKey)))
    .orderBy(asc(clusters.name));
  return rows.map((r) => ({ cluster: r.cluster, accountKey: r.accountKey!, revocations: r.revocations }));
}

/** Account public keys of every cluster that has one, whatever its state. */
export async function knownAccountKeys(db: DbOrTx): Promise<Map<string, ClusterRow['state']>> {
  const rows = await db
    .select({ key: clusters.accountPublicKey, state: clusters.state })
    .from(clusters)
    .where(isNotNull(clusters.accountPublicKey));
  return new Map(rows.map((r) => [r.key!, r.state]));
}

/** What the row says about the cluster's NATS identity after a change. */
export type IdentityUpdate = Partial<
  Pick<
    ClusterRow,
    | 'agentPublicKey'
    | 'accountPublicKey'
    | 'revokedKeys'
    | 'credentialId'
    | 'credentialExpiresAt'
    | 'lastSignedRequestMs'
    | 'credentialsIssued'
  >
>;

export async function updateIdentity(db: DbOrTx, name: string, u: IdentityUpdate): Promise<ClusterRow> {
  const [saved] = await db
    .update(clusters)
    .set({ ...u, updatedAt: new Date() })
    .where(eq(clusters.name, name))
    .returning();
  return saved!;
}

export interface HeartbeatUpdate {
  cluster: string;
  /** A Date, or an ISO timestamp with microseconds (see isoMicros). */
  at: Date | string;
  agentVersion: string;
  kubernetesVersion: string;
  /** The agent's hub link session (HeartbeatMessage.linkId); absent from older agents. */
  linkId?: string;
}

/** What recordHeartbeats changed. */
export interface HeartbeatsRecorded {
  updated: number;
  /** The link state of every cluster whose heartbeat was stored (planLinkRepublish decides). */
  links: LinkState[];
}

/**
 * Stores heartbeats; an older heartbeat never moves last_heartbeat_at backwards. A cluster's
 * first link id is recorded as already republished for: the first start of a link needs none.
 */
export async function recordHeartbeats(db: DbOrTx, beats: readonly HeartbeatUpdate[]): Promise<HeartbeatsRecorded> {
  if (beats.length === 0) return { updated: 0, links: [] };
  const values = sql.join(
    beats.map(
      (b) =>
        sql`(${b.cluster}, ${typeof b.at === 'string' ? b.at : b.at.toISOString()}::timestamptz, ${b.agentVersion}, ${b.kubernetesVersion}, ${b.linkId ?? null}::text)`,
    ),
    sql`, `,
  );
  const res = await db.execute<{
    name: string;
    link_id: string | null;
    republished_for: string | null;
    republished_at: string | Date | null;
  }>(sql`
    update ${clusters} as c
       set last_heartbeat_at = v.at, agent_version = v.agent_version, kubernetes_version = v.kubernetes_version,
           agent_link_id = coalesce(v.link_id, c.agent_link_id),
           link_republished_for = coalesce(c.link_republished_for, v.link_id)
      from (values ${values}) as v(name, at, agent_version, kubernetes_version, link_id)
     where c.name = v.name and c.state = 'accepted'
       and (c.last_heartbeat_at is null or c.last_heartbeat_at < v.at)
    returning c.name, c.agent_link_id as link_id, c.link_republished_for as republished_for,
              c.link_republished_at as republished_at`);
  const links = res.rows.map((r) => ({
    cluster: r.name,
    linkId: r.link_id,
    republishedFor: r.republished_for,
    republishedAtMs: r.republished_at === null ? null : new Date(r.republished_at).getTime(),
  }));
  return { updated: res.rowCount ?? 0, links };
}

/** Records that `clusters` were republished for their current link at `at`. */
export async function markLinksRepublished(
  db: DbOrTx,
  republished: readonly { cluster: string; linkId: string }[],
  at: Date,
): Promise<void> {
  if (republished.length === 0) return;
  await db.execute(sql`
    update ${clusters} as c set link_republished_for = v.link_id, link_republished_at = ${at.toISOString()}::timestamptz
      from unnest(${sql.param(republished.map((r) => r.cluster))}::text[],
                  ${sql.param(republished.map((r) => r.linkId))}::text[]) as v(name, link_id)
     where c.name = v.name`);
}
