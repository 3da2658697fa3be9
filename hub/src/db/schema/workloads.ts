import { sql } from 'drizzle-orm';
import { integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { WORKLOAD_KINDS, type Overrides, type Placement, type WorkloadMetadata, type WorkloadRef } from '@flotilla/api';

/** Workloads: kind + template (the current revision) + placement. Soft-deleted to keep history. */
export const workloads = pgTable(
  'workloads',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    kind: text('kind', { enum: WORKLOAD_KINDS }).notNull(),
    namespace: text('namespace').notNull(),
    name: text('name').notNull(),
    placement: jsonb('placement').$type<Placement>().notNull(),
    currentRevision: integer('current_revision').notNull(),
    /** 'Immediate': clusters follow currentRevision; 'Rollout': they move only through rollouts. */
    updatePolicy: text('update_policy', { enum: ['Immediate', 'Rollout'] })
      .notNull()
      .default('Immediate'),
    /** The revision clusters get unless a rollout pins them (updatePolicy 'Rollout'). */
    stableRevision: integer('stable_revision').notNull().default(1),
    /** Workloads this one waits for in each cluster of its rollouts (namespaces filled in). */
    dependsOn: jsonb('depends_on').$type<Required<WorkloadRef>[]>().notNull().default([]),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
  },
  (t) => [
    // One live workload per object; a deleted one may be recreated under the same name.
    uniqueIndex('workloads_live_object_idx')
      .on(t.kind, t.namespace, t.name)
      .where(sql`${t.deletedAt} is null`),
  ],
);

/** Immutable revisions: every change of spec, metadata or overrides appends one. */
export const workloadRevisions = pgTable(
  'workload_revisions',
  {
    workloadId: uuid('workload_id')
      .notNull()
      .references(() => workloads.id),
    revision: integer('revision').notNull(),
    hash: text('hash').notNull(),
    metadata: jsonb('metadata').$type<WorkloadMetadata>().notNull(),
    spec: jsonb('spec').$type<Record<string, unknown>>().notNull(),
    overrides: jsonb('overrides').$type<Overrides>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    createdBy: text('created_by').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workloadId, t.revision] })],
);
