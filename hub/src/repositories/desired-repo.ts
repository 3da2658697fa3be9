/** Per-cluster desired rows and the outbox rows that announce them, written together. */
import { and, eq, inArray, sql } from 'drizzle-orm';
import { PROTOCOL_VERSION, desiredSubject, type DesiredMessage } from '@flotilla/api';
import type { DbOrTx } from '../db/client.js';
import { desiredObjects, outbox } from '../db/schema/index.js';
import type { CurrentDesired, DesiredChange } from '../domain/desired-plan.js';
import type { WorkloadIdentity } from '../domain/manifest.js';

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

function message(identity: WorkloadIdentity, c: DesiredChange, now: Date): DesiredMessage {
  return {
    v: PROTOCOL_VERSION,
    cluster: c.cluster,
    kind: identity.kind,
    namespace: identity.namespace,
    name: identity.name,
    workloadId: identity.id,
    revision: c.revision,
    generation: c.generation,
    deleted: c.deleted,
    ...(c.manifest ? { manifest: c.manifest } : {}),
    publishedAt: now.toISOString(),
  };
}

/** Upserts the changed desired rows and appends one outbox message per change. */
export async function writeDesiredChanges(
  db: DbOrTx,
  identity: WorkloadIdentity,
  changes: readonly DesiredChange[],
  now = new Date(),
): Promise<void> {
  if (changes.length === 0) return;
  await db
    .insert(desiredObjects)
    .values(
      changes.map((c) => ({
        clusterName: c.cluster,
        kind: identity.kind,
        namespace: identity.namespace,
        name: identity.name,
        workloadId: identity.id,
        revision: c.revision,
        generation: c.generation,
        deleted: c.deleted,
        manifest: c.manifest,
        manifestHash: c.manifestHash,
        updatedAt: now,
      })),
    )
    .onConflictDoUpdate({
      target: [desiredObjects.clusterName, desiredObjects.kind, desiredObjects.namespace, desiredObjects.name],
      set: {
        workloadId: sql`excluded.workload_id`,
        revision: sql`excluded.revision`,
        generation: sql`excluded.generation`,
        deleted: sql`excluded.deleted`,
        manifest: sql`excluded.manifest`,
        manifestHash: sql`excluded.manifest_hash`,
        updatedAt: sql`excluded.updated_at`,
      },
    });
  await db.insert(outbox).values(
    changes.map((c) => {
      const subject = desiredSubject(c.cluster, identity);
      return {
        subject,
        msgId: `${subject}@${c.generation}`,
        payload: message(identity, c, now),
      };
    }),
  );
}
