/**
 * Per-cluster desired rows: what each cluster should run, the truth the DESIRED stream mirrors.
 * The messages announcing a change are the caller's (services/desired-sync.ts appends them to the
 * outbox in the same transaction).
 */
import { and, eq, inArray, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { DbOrTx } from '../db/client.js';
import { desiredObjects } from '../db/schema/index.js';
import type { StoredDesired } from '../domain/desired-check.js';
import type { StoredDesiredRow } from '../domain/desired-message.js';
import type { CurrentDesired, DesiredChange } from '../domain/desired-plan.js';
import type { WorkloadIdentity } from '../domain/manifest.js';
import { jsonTexts } from './json-param.js';

/** Rows of one object (kind, namespace, name), in any cluster. */
function sameObject(o: { kind: string; namespace: string; name: string }): SQL | undefined {
  return and(
    eq(desiredObjects.kind, o.kind),
    eq(desiredObjects.namespace, o.namespace),
    eq(desiredObjects.name, o.name),
  );
}

/** Current rows of one object (any workload that ever owned it), keyed by cluster. */
export async function currentDesired(
  db: DbOrTx,
  identity: Omit<WorkloadIdentity, 'id'>,
  clusterNames?: readonly string[],
): Promise<Map<string, CurrentDesired>> {
  const rows = await db
    .select({
      cluster: desiredObjects.clusterName,
      generation: desiredObjects.generation,
      deleted: desiredObjects.deleted,
      manifestHash: desiredObjects.manifestHash,
    })
    .from(desiredObjects)
    .where(
      and(sameObject(identity), clusterNames ? inArray(desiredObjects.clusterName, [...clusterNames]) : undefined),
    );
  return new Map(rows.map((r) => [r.cluster, r]));
}

/** The live manifests the hub sends for one object now (tombstones left out), by cluster. */
export async function liveManifests(
  db: DbOrTx,
  identity: Omit<WorkloadIdentity, 'id'>,
): Promise<Map<string, { revision: number; manifest: Record<string, unknown> | null }>> {
  const rows = await db
    .select({
      cluster: desiredObjects.clusterName,
      revision: desiredObjects.revision,
      manifest: desiredObjects.manifest,
    })
    .from(desiredObjects)
    .where(and(sameObject(identity), eq(desiredObjects.deleted, false)));
  return new Map(rows.map((r) => [r.cluster, { revision: r.revision, manifest: r.manifest }]));
}

/**
 * Upserts the changed desired rows of one object. Rows go in as arrays through `unnest` (one
 * statement, a handful of parameters), because a fleet-wide change writes one row per cluster
 * and per-row parameters made thousands of them.
 */
export async function upsertDesired(
  db: DbOrTx,
  identity: WorkloadIdentity,
  changes: readonly DesiredChange[],
  now: Date,
): Promise<void> {
  if (changes.length === 0) return;
  // sql.param passes a JS array as one array parameter (a bare array would expand to a list).
  const col = <T>(f: (c: DesiredChange) => T): SQLWrapper => sql.param(changes.map(f));
  await db.execute(sql`
    insert into ${desiredObjects}
      (cluster_name, kind, namespace, name, workload_id, revision, generation, deleted, manifest, manifest_hash, updated_at)
    select u.cluster, ${identity.kind}, ${identity.namespace}, ${identity.name}, ${identity.id}::uuid,
           u.revision, u.generation, u.deleted, u.manifest::jsonb, u.manifest_hash, ${now.toISOString()}::timestamptz
      from rows from (
             unnest(${col((c) => c.cluster)}::text[], ${col((c) => c.revision)}::int[], ${col((c) => c.generation)}::bigint[],
                    ${col((c) => c.deleted)}::bool[], ${col((c) => c.manifestHash)}::text[]),
             json_array_elements_text(${jsonTexts(changes.map((c) => (c.manifest ? JSON.stringify(c.manifest) : null)))}::json))
           as u(cluster, revision, generation, deleted, manifest_hash, manifest)
    on conflict (cluster_name, kind, namespace, name) do update set
      workload_id = excluded.workload_id, revision = excluded.revision, generation = excluded.generation,
      deleted = excluded.deleted, manifest = excluded.manifest, manifest_hash = excluded.manifest_hash,
      updated_at = excluded.updated_at`);
}

/** The live desired rows of one cluster (to publish again after its agent's link restarted). */
export async function liveDesiredRows(db: DbOrTx, cluster: string): Promise<StoredDesiredRow[]> {
  return db
    .select()
    .from(desiredObjects)
    .where(and(eq(desiredObjects.clusterName, cluster), eq(desiredObjects.deleted, false)));
}

/** One object in one cluster. */
export interface DesiredObjectKey {
  cluster: string;
  kind: string;
  namespace: string;
  name: string;
}

/** The stored rows (tombstones included) of the given objects that exist. */
export async function storedDesired(
  db: DbOrTx,
  keys: readonly DesiredObjectKey[],
): Promise<{ key: DesiredObjectKey; stored: StoredDesired }[]> {
  if (keys.length === 0) return [];
  const col = (f: (k: DesiredObjectKey) => string): SQLWrapper => sql.param(keys.map(f));
  const res = await db.execute<{
    cluster_name: string;
    kind: string;
    namespace: string;
    name: string;
    workload_id: string;
    revision: number;
    generation: string;
    deleted: boolean;
    manifest_hash: string;
  }>(sql`
    select d.cluster_name, d.kind, d.namespace, d.name, d.workload_id, d.revision, d.generation, d.deleted, d.manifest_hash
      from unnest(${col((k) => k.cluster)}::text[], ${col((k) => k.kind)}::text[],
                  ${col((k) => k.namespace)}::text[], ${col((k) => k.name)}::text[]) as k(cluster, kind, namespace, name)
      join ${desiredObjects} d
        on d.cluster_name = k.cluster and d.kind = k.kind and d.namespace = k.namespace and d.name = k.name`);
  return res.rows.map((r) => ({
    key: { cluster: r.cluster_name, kind: r.kind, namespace: r.namespace, name: r.name },
    stored: {
      workloadId: r.workload_id,
      revision: r.revision,
      generation: Number(r.generation),
      deleted: r.deleted,
      manifestHash: r.manifest_hash,
    },
  }));
}

/** The stored row (live or tombstone) of one object in one cluster, if any. */
export async function desiredRow(db: DbOrTx, key: DesiredObjectKey): Promise<StoredDesiredRow | undefined> {
  const [row] = await db
    .select()
    .from(desiredObjects)
    .where(and(eq(desiredObjects.clusterName, key.cluster), sameObject(key)));
  return row;
}
