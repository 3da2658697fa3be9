import { bigint, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/** Latest reported status per cluster and object; older reports never overwrite newer ones. */
export const objectStatus = pgTable(
  'object_status',
  {
    clusterName: text('cluster_name').notNull(),
    kind: text('kind').notNull(),
    namespace: text('namespace').notNull(),
    name: text('name').notNull(),
    workloadId: text('workload_id').notNull(),
    revision: integer('revision').notNull(),
    generation: bigint('generation', { mode: 'number' }).notNull(),
    observedGeneration: bigint('observed_generation', { mode: 'number' }).notNull(),
    replicas: integer('replicas').notNull(),
    readyReplicas: integer('ready_replicas').notNull(),
    updatedReplicas: integer('updated_replicas').notNull(),
    updatedReadyReplicas: integer('updated_ready_replicas').notNull(),
    availableReplicas: integer('available_replicas').notNull(),
    health: text('health').notNull(),
    message: text('message').notNull(),
    reportedAt: timestamp('reported_at', { withTimezone: true }).notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.clusterName, t.kind, t.namespace, t.name] })],
);
