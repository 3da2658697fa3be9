/**
 * Latest status per cluster and object. Writes are batched and guarded: a report replaces the
 * stored one only when its (generation, stored_at, stream_seq) is larger — the same order as
 * isNewerStatus in the api package — so a stale or redelivered report never wins, and nothing
 * the agent chose (reportedAt, observedGeneration) decides.
 */
import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { LabelSelector, ObjectStatusRow, StatusHealth, WorkloadKind } from '@flotilla/api';
import type { DbOrTx } from '../db/client.js';
import { clusters, desiredObjects, objectStatus } from '../db/schema/index.js';
import type { Placement } from '../domain/status-admission.js';
import { isoMicros, statusKey, type TimedStatus } from '../domain/status-coalesce.js';
import { selectorSql } from './label-sql.js';

/**
 * What the hub placed for the objects of `reports` (tombstones included), by statusKey: one
 * query over the batch's distinct keys.
 */
export async function placementsOf(db: DbOrTx, reports: readonly TimedStatus[]): Promise<Map<string, Placement>> {
  const keys = new Map(reports.map((r) => [statusKey(r.message), r.message]));
  const out = new Map<string, Placement>();
  if (keys.size === 0) return out;
  const list = [...keys.values()];
  const col = (f: (m: (typeof list)[number]) => string): SQLWrapper => sql.param(list.map(f));
  const res = await db.execute<{
    cluster_name: string;
    kind: string;
    namespace: string;
    name: string;
    generation: string | number;
    workload_id: string;
  }>(sql`
    select d.cluster_name, d.kind, d.namespace, d.name, d.generation, d.workload_id
      from unnest(${col((m) => m.cluster)}::text[], ${col((m) => m.kind)}::text[],
                  ${col((m) => m.namespace)}::text[], ${col((m) => m.name)}::text[]) as k(cluster_name, kind, namespace, name)
      join ${desiredObjects} d
        on d.cluster_name = k.cluster_name and d.kind = k.kind and d.namespace = k.namespace and d.name = k.name`);
  for (const r of res.rows) {
    out.set(statusKey({ cluster: r.cluster_name, kind: r.kind, namespace: r.namespace, name: r.name }), {
      generation: Number(r.generation),
      workloadId: r.workload_id,
    });
  }
  return out;
}

/** The columns a report writes, in the order upsertStatuses selects them. */
export const STATUS_COLUMNS = sql`(cluster_name, kind, namespace, name, workload_id, revision, generation,
  observed_generation, replicas, ready_replicas, updated_replicas, updated_ready_replicas, available_replicas, health,
  message, reported_at, stored_at, stream_seq)`;

/** A report replaces the stored one only when its (generation, stored_at, stream_seq) is larger. */
export const NEWER_STATUS_WINS = sql`on conflict (cluster_name, kind, namespace, name) do update set
  workload_id = excluded.workload_id, revision = excluded.revision, generation = excluded.generation,
  observed_generation = excluded.observed_generation, replicas = excluded.replicas,
  ready_replicas = excluded.ready_replicas, updated_replicas = excluded.updated_replicas,
  updated_ready_replicas = excluded.updated_ready_replicas, available_replicas = excluded.available_replicas,
  health = excluded.health, message = excluded.message, reported_at = excluded.reported_at,
  stored_at = excluded.stored_at, stream_seq = excluded.stream_seq, received_at = now()
  where (${objectStatus}.generation, ${objectStatus}.stored_at, ${objectStatus}.stream_seq)
      < (excluded.generation, excluded.stored_at, excluded.stream_seq)`;

/**
 * Upserts a coalesced batch (at most one report per object); returns rows actually written.
 * Columns go in as arrays through `unnest`, so a batch of thousands is one statement with 18
 * parameters (one JSON text parameter costs the hub less CPU but was not clearly faster:
 * test/bench/hub/README.md, status store).
 */
export async function upsertStatuses(db: DbOrTx, reports: readonly TimedStatus[]): Promise<number> {
  if (reports.length === 0) return 0;
  const col = <T>(f: (r: TimedStatus) => T): SQLWrapper => sql.param(reports.map(f));
  const res = await db.execute(sql`
    insert into ${objectStatus} ${STATUS_COLUMNS}
    select * from unnest(
      ${col((r) => r.message.cluster)}::text[], ${col((r) => r.message.kind)}::text[],
      ${col((r) => r.message.namespace)}::text[], ${col((r) => r.message.name)}::text[],
      ${col((r) => r.message.workloadId)}::text[], ${col((r) => r.message.revision)}::int[],
      ${col((r) => r.message.generation)}::bigint[], ${col((r) => r.message.observedGeneration)}::bigint[],
      ${col((r) => r.message.counts.replicas)}::int[], ${col((r) => r.message.counts.readyReplicas)}::int[],
      ${col((r) => r.message.counts.updatedReplicas)}::int[], ${col((r) => r.message.counts.updatedReadyReplicas)}::int[],
      ${col((r) => r.message.counts.availableReplicas)}::int[], ${col((r) => r.message.health)}::text[],
      ${col((r) => r.message.message)}::text[], ${col((r) => new Date(r.reportedAtMs).toISOString())}::timestamptz[],
      ${col((r) => isoMicros(r.storedAtMs))}::timestamptz[], ${col((r) => r.streamSequence)}::bigint[])
    ${NEWER_STATUS_WINS}`);
  return res.rowCount ?? 0;
}

export interface StatusFilter {
  selector?: LabelSelector;
  health?: StatusHealth;
}

/** Effective health: no report yet → Pending; a report about an older generation → Progressing. */
const effectiveHealth = sql`case
  when s.cluster_name is null then 'Pending'
  when s.generation < d.generation then 'Progressing'
  else s.health end`;

interface RawRow extends Record<string, unknown> {
  cluster: string;
  workload_id: string;
  kind: WorkloadKind;
  namespace: string;
  name: string;
  desired_revision: number;
  desired_generation: string | number;
  reported_revision: number | null;
  reported_generation: string | number | null;
  observed_generation: string | number | null;
  replicas: number | null;
  ready_replicas: number | null;
  updated_replicas: number | null;
  updated_ready_replicas: number | null;
  available_replicas: number | null;
  health: StatusHealth;
  message: string | null;
  reported_at: string | Date | null;
}

const num = (v: string | number | null): number | null => (v === null ? null : Number(v));

function toRow(r: RawRow, now: Date): ObjectStatusRow {
  const reportedAt = r.reported_at === null ? null : new Date(r.reported_at);
  const desiredGeneration = Number(r.desired_generation);
  return {
    cluster: r.cluster,
    workloadId: r.workload_id,
    workloadName: r.name,
    kind: r.kind,
    namespace: r.namespace,
    name: r.name,
    desiredRevision: r.desired_revision,
    desiredGeneration,
    reportedRevision: r.reported_revision,
    reportedGeneration: num(r.reported_generation),
    observedGeneration: num(r.observed_generation),
    upToDate: num(r.reported_generation) === desiredGeneration,
    counts:
      r.replicas === null
        ? null
        : {
            replicas: r.replicas,
            readyReplicas: r.ready_replicas ?? 0,
            updatedReplicas: r.updated_replicas ?? 0,
            updatedReadyReplicas: r.updated_ready_replicas ?? 0,
            availableReplicas: r.available_replicas ?? 0,
          },
    health: r.health,
    message: r.message ?? '',
    reportedAt: reportedAt?.toISOString() ?? null,
    ageSeconds: reportedAt ? Math.max(0, (now.getTime() - reportedAt.getTime()) / 1000) : null,
  };
}

interface StatusQuery {
  scope: SQL;
  filter: StatusFilter;
  after: SQL | undefined;
  orderBy: SQL;
  limit: number | undefined;
  now: Date;
}

async function queryStatus(db: DbOrTx, q: StatusQuery): Promise<ObjectStatusRow[]> {
  const conditions: SQL[] = [sql`d.deleted = false`, q.scope];
  const selector = q.filter.selector ? selectorSql(sql`c.labels`, q.filter.selector) : undefined;
  if (selector) conditions.push(selector);
  if (q.filter.health) conditions.push(sql`${effectiveHealth} = ${q.filter.health}`);
  if (q.after) conditions.push(q.after);
  const res = await db.execute<RawRow>(sql`
    select d.cluster_name as cluster, d.workload_id, d.kind, d.namespace, d.name,
           d.revision as desired_revision, d.generation as desired_generation,
           s.revision as reported_revision, s.generation as reported_generation, s.observed_generation,
           s.replicas, s.ready_replicas, s.updated_replicas, s.updated_ready_replicas, s.available_replicas,
           ${effectiveHealth} as health, s.message, s.reported_at
      from ${desiredObjects} d
      join ${clusters} c on c.name = d.cluster_name
      left join ${objectStatus} s
        on s.cluster_name = d.cluster_name and s.kind = d.kind and s.namespace = d.namespace and s.name = d.name
     where ${sql.join(conditions, sql` and `)}
     order by ${q.orderBy}
     ${q.limit === undefined ? sql`` : sql`limit ${q.limit + 1}`}`);
  return res.rows.map((r) => toRow(r, q.now));
}

/** One row per cluster the workload is placed on; `afterCluster` continues a page. */
export function workloadStatusRows(
  db: DbOrTx,
  workloadId: string,
  filter: StatusFilter,
  page: { afterCluster?: string; limit?: number },
  now: Date,
): Promise<ObjectStatusRow[]> {
  return queryStatus(db, {
    scope: sql`d.workload_id = ${workloadId}`,
    filter,
    after: page.afterCluster === undefined ? undefined : sql`d.cluster_name > ${page.afterCluster}`,
    orderBy: sql`d.cluster_name`,
    limit: page.limit,
    now,
  });
}

/** Every workload object placed on one cluster, in (kind, namespace, name) order. */
export function clusterStatusRows(
  db: DbOrTx,
  cluster: string,
  filter: Omit<StatusFilter, 'selector'>,
  page: { after?: [string, string, string]; limit: number },
  now: Date,
): Promise<ObjectStatusRow[]> {
  const after = page.after
    ? sql`(d.kind, d.namespace, d.name) > (${page.after[0]}, ${page.after[1]}, ${page.after[2]})`
    : undefined;
  return queryStatus(db, {
    scope: sql`d.cluster_name = ${cluster}`,
    filter,
    after,
    orderBy: sql`d.kind, d.namespace, d.name`,
    limit: page.limit,
    now,
  });
}
