import { bigint, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Latest reported status per cluster and object, of objects the hub placed there. A report
 * replaces the row only when it is about a newer generation, or the same generation stored later
 * by JetStream (stored_at, then stream_seq): never by the agent's reportedAt.
 */
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
    /** The agent's clock (shown, never compared). */
    reportedAt: timestamp('reported_at', { withTimezone: true }).notNull(),
    /** When JetStream stored the report (the server's clock): orders reports and dates them. */
    storedAt: timestamp('stored_at', { withTimezone: true }).notNull().defaultNow(),
    /** The report's STATUS stream sequence: orders reports stored in the same microsecond. */
    streamSeq: bigint('stream_seq', { mode: 'number' }).notNull().default(0),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.clusterName, t.kind, t.namespace, t.name] })],
);
