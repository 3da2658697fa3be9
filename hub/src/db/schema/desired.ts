import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';

/**
 * Desired state per cluster and object: the source of truth the DESIRED stream mirrors. A
 * deleted workload leaves tombstones (`deleted`) so the sequence of generations never restarts.
 */
export const desiredObjects = pgTable(
  'desired_objects',
  {
    clusterName: text('cluster_name').notNull(),
    kind: text('kind').notNull(),
    namespace: text('namespace').notNull(),
    name: text('name').notNull(),
    workloadId: uuid('workload_id').notNull(),
    revision: integer('revision').notNull(),
    /** Per-object sequence of desired changes; agents and status ordering rely on it. */
    generation: bigint('generation', { mode: 'number' }).notNull(),
    deleted: boolean('deleted').notNull().default(false),
    manifest: jsonb('manifest').$type<Record<string, unknown>>(),
    manifestHash: text('manifest_hash').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.clusterName, t.kind, t.namespace, t.name] }),
    index('desired_objects_workload_idx').on(t.workloadId, t.clusterName),
  ],
);
