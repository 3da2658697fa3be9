import { sql } from 'drizzle-orm';
import {
  bigserial,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import type { RolloutStrategy } from '@flotilla/api';
import { workloads } from './workloads.js';

/**
 * Per (workload, cluster) revision a rollout holds a cluster at, with an optional in-cluster
 * canary partition (CloneSets, StatefulSets, DaemonSets). Desired rendering uses the pin before the workload's default.
 */
export const rolloutPins = pgTable(
  'rollout_pins',
  {
    workloadId: uuid('workload_id')
      .notNull()
      .references(() => workloads.id),
    clusterName: text('cluster_name').notNull(),
    revision: integer('revision').notNull(),
    /** The step's partition (number or percent string; desired-plan.ts writes it); null for a full update. */
    partition: jsonb('partition').$type<number | string>(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.workloadId, t.clusterName] })],
);

/** Rollouts: the frozen plan and the scheduler's state, committed together with their effects. */
export const rollouts = pgTable(
  'rollouts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    workloadId: uuid('workload_id')
      .notNull()
      .references(() => workloads.id),
    targetRevision: integer('target_revision').notNull(),
    previousRevision: integer('previous_revision').notNull(),
    strategy: jsonb('strategy').$type<RolloutStrategy>().notNull(),
    /** The frozen plan and the run's state (domain/rollouts/types.ts; typed by the repository). */
    plan: jsonb('plan').notNull(),
    state: jsonb('state').notNull(),
    phase: text('phase').notNull(),
    /** The rollout this one rolls back, if any. */
    rollbackOf: uuid('rollback_of'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    createdBy: text('created_by').notNull(),
  },
  (t) => [
    // At most one active rollout per workload (ACTIVE_ROLLOUT_PHASES).
    uniqueIndex('rollouts_one_active_idx')
      .on(t.workloadId)
      .where(sql`${t.phase} in ('Progressing', 'WaitingApproval', 'Paused')`),
    index('rollouts_phase_idx').on(t.phase),
    index('rollouts_workload_idx').on(t.workloadId, t.createdAt),
  ],
);

/** What happened to a rollout, in order: the status history and the SSE stream's source. */
export const rolloutEvents = pgTable(
  'rollout_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    rolloutId: uuid('rollout_id')
      .notNull()
      .references(() => rollouts.id),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    level: text('level').notNull(),
    message: text('message').notNull(),
    wave: text('wave'),
    cluster: text('cluster'),
    /** The rollout's phase after the step that produced the event. */
    phase: text('phase').notNull(),
  },
  (t) => [index('rollout_events_rollout_idx').on(t.rolloutId, t.id)],
);
