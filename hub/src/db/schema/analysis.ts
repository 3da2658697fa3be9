import { integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { rollouts } from './rollouts.js';

/**
 * Metric analysis runs, one per (rollout, member cluster, attempt), written by the analysis
 * runner outside the rollout's step and read by the scheduler as an observation. `measurements`
 * holds each measurement's per-query results (AnalysisResult[][], domain/rollouts/types.ts).
 */
export const analysisRuns = pgTable(
  'analysis_runs',
  {
    rolloutId: uuid('rollout_id')
      .notNull()
      .references(() => rollouts.id, { onDelete: 'cascade' }),
    clusterName: text('cluster_name').notNull(),
    attempt: integer('attempt').notNull(),
    /** On the scheduler's clock: measurements are due every interval from here. */
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    measurements: jsonb('measurements').$type<unknown[][]>().notNull().default([]),
    verdict: text('verdict').notNull(),
    message: text('message').notNull().default(''),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.rolloutId, t.clusterName, t.attempt] })],
);
