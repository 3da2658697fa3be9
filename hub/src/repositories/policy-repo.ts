/** Exceptions to the workload admission policy. */
import { and, asc, eq, isNull, or } from 'drizzle-orm';
import type { PolicyException, WorkloadPolicyControl } from '@flotilla/api';
import type { DbOrTx } from '../db/client.js';
import { workloadPolicyExceptions } from '../db/schema/index.js';

type Row = typeof workloadPolicyExceptions.$inferSelect;

export interface ExceptionValues {
  name: string;
  /** '' for a cluster-scoped workload. */
  namespace: string;
  kind: string | null;
  workloadName: string | null;
  allow: WorkloadPolicyControl[];
  reason: string;
}

export function toApiException(row: Row): PolicyException {
  return {
    name: row.name,
    match: {
      ...(row.namespace !== '' ? { namespace: row.namespace } : {}),
      ...(row.kind !== null ? { kind: row.kind as PolicyException['match']['kind'] } : {}),
      ...(row.workloadName !== null ? { name: row.workloadName } : {}),
    },
    allow: row.allow as WorkloadPolicyControl[],
    reason: row.reason,
    createdAt: row.createdAt.toISOString(),
    createdBy: row.createdBy,
    updatedAt: row.updatedAt.toISOString(),
    updatedBy: row.updatedBy,
  };
}

export async function listExceptions(db: DbOrTx): Promise<Row[]> {
  return db.select().from(workloadPolicyExceptions).orderBy(asc(workloadPolicyExceptions.name));
}

export async function getException(db: DbOrTx, name: string, forUpdate = false): Promise<Row | undefined> {
  const q = db.select().from(workloadPolicyExceptions).where(eq(workloadPolicyExceptions.name, name)).limit(1);
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

/** Creates or replaces an exception by name; `created` tells which. */
export async function putException(
  db: DbOrTx,
  values: ExceptionValues,
  actor: string,
): Promise<{ row: Row; created: boolean }> {
  const existing = await getException(db, values.name, true);
  if (existing) {
    const [row] = await db
      .update(workloadPolicyExceptions)
      .set({ ...values, updatedAt: new Date(), updatedBy: actor })
      .where(eq(workloadPolicyExceptions.name, values.name))
      .returning();
    return { row: row!, created: false };
  }
  const [row] = await db
    .insert(workloadPolicyExceptions)
    .values({ ...values, createdBy: actor, updatedBy: actor })
    .returning();
  return { row: row!, created: true };
}

export async function deleteException(db: DbOrTx, name: string): Promise<Row | undefined> {
  const [row] = await db.delete(workloadPolicyExceptions).where(eq(workloadPolicyExceptions.name, name)).returning();
  return row;
}

/** The exceptions that cover one workload: its namespace's, and those naming it. */
export async function exceptionsFor(db: DbOrTx, w: { kind: string; namespace: string; name: string }): Promise<Row[]> {
  const t = workloadPolicyExceptions;
  return db
    .select()
    .from(t)
    .where(
      and(
        eq(t.namespace, w.namespace),
        or(isNull(t.kind), eq(t.kind, w.kind)),
        or(isNull(t.workloadName), eq(t.workloadName, w.name)),
      ),
    );
}
