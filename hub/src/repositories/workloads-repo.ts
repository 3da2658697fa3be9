/** Workloads and their immutable revisions. */
import { and, asc, desc, eq, inArray, isNull, lt, sql, type SQL } from 'drizzle-orm';
import type {
  Overrides,
  Placement,
  Workload,
  WorkloadKind,
  WorkloadMetadata,
  WorkloadRef,
  WorkloadRevision,
} from '@flotilla/api';
import type { DbOrTx } from '../db/client.js';
import { workloadRevisions, workloads } from '../db/schema/index.js';
import { conflict, isUniqueViolation } from '../errors.js';

export type WorkloadRow = typeof workloads.$inferSelect;
export type RevisionRow = typeof workloadRevisions.$inferSelect;

/** Joins a workload to its current revision. */
const currentRevisionJoin = and(
  eq(workloadRevisions.workloadId, workloads.id),
  eq(workloadRevisions.revision, workloads.currentRevision),
);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids that are not UUIDs cannot exist; checking first keeps them a 404 instead of a SQL error. */
export function isWorkloadId(id: string): boolean {
  return UUID.test(id);
}

export function toApiWorkload(w: WorkloadRow, r: RevisionRow): Workload {
  return {
    id: w.id,
    kind: w.kind,
    name: w.name,
    namespace: w.namespace,
    metadata: r.metadata,
    spec: r.spec,
    placement: w.placement,
    overrides: r.overrides,
    revision: w.currentRevision,
    updatePolicy: w.updatePolicy,
    stableRevision: w.updatePolicy === 'Rollout' ? w.stableRevision : w.currentRevision,
    dependsOn: w.dependsOn,
    createdAt: w.createdAt.toISOString(),
    updatedAt: w.updatedAt.toISOString(),
  };
}

export function toApiRevision(r: RevisionRow): WorkloadRevision {
  return {
    workloadId: r.workloadId,
    revision: r.revision,
    hash: r.hash,
    metadata: r.metadata,
    spec: r.spec,
    overrides: r.overrides,
    createdAt: r.createdAt.toISOString(),
    createdBy: r.createdBy,
  };
}

export interface NewWorkload {
  kind: WorkloadKind;
  namespace: string;
  name: string;
  placement: Placement;
  updatePolicy?: 'Immediate' | 'Rollout';
  dependsOn?: Required<WorkloadRef>[];
}

export async function insertWorkload(db: DbOrTx, w: NewWorkload): Promise<WorkloadRow> {
  try {
    const [row] = await db
      .insert(workloads)
      .values({ ...w, currentRevision: 1 })
      .returning();
    return row!;
  } catch (err) {
    if (isUniqueViolation(err)) {
      const where = w.namespace ? `${w.namespace}/${w.name}` : w.name;
      throw conflict(`a ${w.kind} workload named ${where} already exists`);
    }
    throw err;
  }
}

export interface NewRevision {
  workloadId: string;
  revision: number;
  hash: string;
  metadata: WorkloadMetadata;
  spec: Record<string, unknown>;
  overrides: Overrides;
  createdBy: string;
}

export async function insertRevision(db: DbOrTx, r: NewRevision): Promise<RevisionRow> {
  const [row] = await db.insert(workloadRevisions).values(r).returning();
  return row!;
}

/** A live (not deleted) workload; `forUpdate` locks its row for the transaction. */
export async function getLiveWorkload(db: DbOrTx, id: string, forUpdate = false): Promise<WorkloadRow | undefined> {
  if (!isWorkloadId(id)) return undefined;
  const q = db
    .select()
    .from(workloads)
    .where(and(eq(workloads.id, id), isNull(workloads.deletedAt)))
    .limit(1);
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

export async function getRevision(db: DbOrTx, workloadId: string, revision: number): Promise<RevisionRow | undefined> {
  if (!isWorkloadId(workloadId)) return undefined;
  const [row] = await db
    .select()
    .from(workloadRevisions)
    .where(and(eq(workloadRevisions.workloadId, workloadId), eq(workloadRevisions.revision, revision)))
    .limit(1);
  return row;
}

export async function updateWorkloadHead(
  db: DbOrTx,
  id: string,
  set: {
    placement?: Placement;
    currentRevision?: number;
    deletedAt?: Date;
    updatePolicy?: 'Immediate' | 'Rollout';
    stableRevision?: number;
    dependsOn?: Required<WorkloadRef>[];
  },
): Promise<WorkloadRow> {
  const [row] = await db
    .update(workloads)
    .set({ ...set, updatedAt: new Date() })
    .where(eq(workloads.id, id))
    .returning();
  return row!;
}

export interface WorkloadListFilter {
  kind?: WorkloadKind;
  namespace?: string;
  /** Continue after this (kind, namespace, name). */
  after?: [string, string, string];
  limit: number;
}

/** Live workloads with their current revision, in (kind, namespace, name) order; `limit + 1` rows. */
export async function listWorkloads(
  db: DbOrTx,
  f: WorkloadListFilter,
): Promise<{ workload: WorkloadRow; revision: RevisionRow }[]> {
  const after: SQL | undefined = f.after
    ? sql`(${workloads.kind}, ${workloads.namespace}, ${workloads.name}) > (${f.after[0]}, ${f.after[1]}, ${f.after[2]})`
    : undefined;
  return db
    .select({ workload: workloads, revision: workloadRevisions })
    .from(workloads)
    .innerJoin(workloadRevisions, currentRevisionJoin)
    .where(
      and(
        isNull(workloads.deletedAt),
        f.kind ? eq(workloads.kind, f.kind) : undefined,
        f.namespace !== undefined ? eq(workloads.namespace, f.namespace) : undefined,
        after,
      ),
    )
    .orderBy(asc(workloads.kind), asc(workloads.namespace), asc(workloads.name))
    .limit(f.limit + 1);
}

/** Revisions newest first; `before` continues a page; `limit + 1` rows. */
export async function listRevisions(
  db: DbOrTx,
  workloadId: string,
  limit: number,
  before: number | undefined,
): Promise<RevisionRow[]> {
  return db
    .select()
    .from(workloadRevisions)
    .where(
      and(
        eq(workloadRevisions.workloadId, workloadId),
        before !== undefined ? lt(workloadRevisions.revision, before) : undefined,
      ),
    )
    .orderBy(desc(workloadRevisions.revision))
    .limit(limit + 1);
}

/** Revisions of one workload by number (those that exist). */
export async function revisionsOf(
  db: DbOrTx,
  workloadId: string,
  revisions: readonly number[],
): Promise<RevisionRow[]> {
  if (revisions.length === 0) return [];
  return db
    .select()
    .from(workloadRevisions)
    .where(and(eq(workloadRevisions.workloadId, workloadId), inArray(workloadRevisions.revision, [...revisions])));
}

/** Every live workload with its current revision (a cluster change recomputes them all). */
export async function liveWorkloadHeads(db: DbOrTx): Promise<{ workload: WorkloadRow; revision: RevisionRow }[]> {
  return db
    .select({ workload: workloads, revision: workloadRevisions })
    .from(workloads)
    .innerJoin(workloadRevisions, currentRevisionJoin)
    .where(isNull(workloads.deletedAt));
}

/** A workload's row whether deleted or not; `forUpdate` locks it for the transaction. */
export async function getWorkload(db: DbOrTx, id: string, forUpdate = false): Promise<WorkloadRow | undefined> {
  const q = db.select().from(workloads).where(eq(workloads.id, id));
  const [row] = forUpdate ? await q.for('update') : await q;
  return row;
}

/** A rollout succeeded: its target becomes the revision clusters get by default. */
export async function setStableRevision(db: DbOrTx, id: string, revision: number, at: Date): Promise<void> {
  await db.update(workloads).set({ stableRevision: revision, updatedAt: at }).where(eq(workloads.id, id));
}

/** Every live workload's identity and dependencies: the graph a new dependency is checked against. */
export async function dependencyGraph(
  db: DbOrTx,
): Promise<{ id: string; kind: WorkloadKind; namespace: string; name: string; dependsOn: Required<WorkloadRef>[] }[]> {
  return db
    .select({
      id: workloads.id,
      kind: workloads.kind,
      namespace: workloads.namespace,
      name: workloads.name,
      dependsOn: workloads.dependsOn,
    })
    .from(workloads)
    .where(isNull(workloads.deletedAt));
}
