/** Per-cluster desired rows and the outbox rows that announce them, written together. */
import { and, eq, inArray, sql, type SQLWrapper } from 'drizzle-orm';
import { desiredSubject } from '@flotilla/api';
import type { DbOrTx } from '../db/client.js';
import { desiredObjects, outbox } from '../db/schema/index.js';
import type { StoredDesired } from '../domain/desired-check.js';
import { desiredMessage } from '../domain/desired-message.js';
import type { CurrentDesired, DesiredChange } from '../domain/desired-plan.js';
import type { WorkloadIdentity } from '../domain/manifest.js';
import { notifyOutbox } from '../nats/outbox-notify.js';
import type { OutboxRecord } from './outbox-repo.js';

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
      and(
        eq(desiredObjects.kind, identity.kind),
        eq(desiredObjects.namespace, identity.namespace),
        eq(desiredObjects.name, identity.name),
        clusterNames ? inArray(desiredObjects.clusterName, [...clusterNames]) : undefined,
      ),
    );
  return new Map(rows.map((r) => [r.cluster, r]));
}

/** Desired rows of one cluster that are live, with their object identity. */
export async function liveObjectsOfCluster(
  db: DbOrTx,
  cluster: string,
): Promise<{ kind: string; namespace: string; name: string; workloadId: string }[]> {
  return db
    .select({
      kind: desiredObjects.kind,
      namespace: desiredObjects.namespace,
      name: desiredObjects.name,
      workloadId: desiredObjects.workloadId,
    })
    .from(desiredObjects)
    .where(and(eq(desiredObjects.clusterName, cluster), eq(desiredObjects.deleted, false)));
}

/**
 * Large text columns (manifests, payloads) travel as one JSON array, unpacked by
 * `json_array_elements_text`: node-postgres escapes a text[] parameter element by element in
 * JavaScript (measured ~16 ms of CPU per 700 KB, often far more with the garbage it leaves),
 * where JSON.stringify takes ~1 ms and Postgres parses JSON faster than an array literal.
 */
function jsonTexts(values: readonly (string | null)[]): SQLWrapper {
  return sql.param(JSON.stringify(values));
}

/**
 * Upserts the changed desired rows and appends one outbox message per change (returned with
 * their ids). Rows go in as arrays through `unnest` (one statement each, a handful of
 * parameters), because a fleet-wide change writes one row per cluster and per-row parameters
 * made thousands of them.
 */
export async function writeDesiredChanges(
  db: DbOrTx,
  identity: WorkloadIdentity,
  changes: readonly DesiredChange[],
  now = new Date(),
): Promise<OutboxRecord[]> {
  if (changes.length === 0) return [];
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
  const subjects = changes.map((c) => desiredSubject(c.cluster, identity));
  const msgIds = subjects.map((s, i) => `${s}@${changes[i]!.generation}`);
  const payloads = changes.map((c) => JSON.stringify(desiredMessage(identity, c, now)));
  return insertOutbox(db, subjects, msgIds, payloads);
}

/**
 * Appends outbox rows and queues the relays' wake-up; returns the rows with their ids, so the
 * writer can hand them to its relay after commit instead of the relay reading them back.
 */
async function insertOutbox(
  db: DbOrTx,
  subjects: readonly string[],
  msgIds: readonly string[],
  payloads: readonly string[],
): Promise<OutboxRecord[]> {
  const res = await db.execute<{ id: string; msg_id: string }>(sql`
    insert into ${outbox} (subject, msg_id, payload)
    select * from rows from (unnest(${sql.param(subjects)}::text[], ${sql.param(msgIds)}::text[]),
                             json_array_elements_text(${jsonTexts(payloads)}::json))
    returning id, msg_id`);
  await notifyOutbox(db);
  // Matched by msg_id (unique within one write) rather than trusting the order RETURNING yields.
  const ids = new Map(res.rows.map((r) => [r.msg_id, Number(r.id)]));
  return subjects.map((subject, i) => ({
    id: ids.get(msgIds[i]!)!,
    subject,
    msgId: msgIds[i]!,
    payload: payloads[i]!,
  }));
}

type DesiredRow = typeof desiredObjects.$inferSelect;

/** The message of a stored row, live or tombstone, as the hub published it (a new publishedAt). */
function rowPayload(r: DesiredRow, now: Date): string {
  return JSON.stringify(
    desiredMessage(
      { id: r.workloadId, kind: r.kind as WorkloadIdentity['kind'], namespace: r.namespace, name: r.name },
      {
        cluster: r.clusterName,
        generation: r.generation,
        revision: r.revision,
        deleted: r.deleted,
        manifest: r.deleted ? null : (r.manifest ?? null),
      },
      now,
    ),
  );
}

/**
 * Queues every live desired object of a cluster for publishing again (after its agent's hub link
 * restarted). The message ids carry the link session, so JetStream's duplicate window does not
 * swallow them, while a heartbeat processed twice republishes only once. Returns the row count.
 */
export async function republishLive(db: DbOrTx, cluster: string, linkId: string, now = new Date()): Promise<number> {
  const rows = await db
    .select()
    .from(desiredObjects)
    .where(and(eq(desiredObjects.clusterName, cluster), eq(desiredObjects.deleted, false)));
  if (rows.length === 0) return 0;
  const subjects = rows.map((r) => desiredSubject(cluster, r));
  const msgIds = subjects.map((s, i) => `${s}@${rows[i]!.generation}@link-${linkId}`);
  await insertOutbox(
    db,
    subjects,
    msgIds,
    rows.map((r) => rowPayload(r, now)),
  );
  return rows.length;
}

/** One object in one cluster. */
export interface DesiredObjectKey {
  cluster: string;
  kind: string;
  namespace: string;
  name: string;
}

/** The stored rows (tombstones included) of the given objects, keyed by their desired subject. */
export async function storedDesired(
  db: DbOrTx,
  keys: readonly DesiredObjectKey[],
): Promise<Map<string, StoredDesired>> {
  if (keys.length === 0) return new Map();
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
  return new Map(
    res.rows.map((r) => [
      desiredSubject(r.cluster_name, r),
      {
        workloadId: r.workload_id,
        revision: r.revision,
        generation: Number(r.generation),
        deleted: r.deleted,
        manifestHash: r.manifest_hash,
      },
    ]),
  );
}

/**
 * Queues the stored value of one object for publishing again, after something else took its
 * subject's place in the stream. Call under the desired-state lock: the row read is then the
 * newest and its outbox row sorts after every earlier change. `tag` makes the message id unique
 * per repaired message (JetStream would drop a republish under the original id as a duplicate)
 * and the same for every replica repairing the same message (the duplicate is dropped).
 * Returns false when the hub holds no row for the object.
 */
export async function queueDesiredRepair(
  tx: DbOrTx,
  key: DesiredObjectKey,
  tag: string,
  now = new Date(),
): Promise<boolean> {
  const [row] = await tx
    .select()
    .from(desiredObjects)
    .where(
      and(
        eq(desiredObjects.clusterName, key.cluster),
        eq(desiredObjects.kind, key.kind),
        eq(desiredObjects.namespace, key.namespace),
        eq(desiredObjects.name, key.name),
      ),
    );
  if (!row) return false;
  const subject = desiredSubject(key.cluster, row);
  await insertOutbox(tx, [subject], [`${subject}@${row.generation}@repair-${tag}`], [rowPayload(row, now)]);
  return true;
}
