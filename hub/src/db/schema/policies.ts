import { sql } from 'drizzle-orm';
import { check, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Exceptions to the workload admission policy, managed by admins (every change audited). One
 * applies to the workloads its match names: every workload of a namespace (of one kind, when
 * `kind` is set), or one workload by kind and name (a cluster-scoped SidecarSet has namespace '').
 * `allow` lists the policy controls it lifts.
 */
export const workloadPolicyExceptions = pgTable(
  'workload_policy_exceptions',
  {
    name: text('name').primaryKey(),
    namespace: text('namespace').notNull(),
    kind: text('kind'),
    workloadName: text('workload_name'),
    allow: jsonb('allow').$type<string[]>().notNull(),
    reason: text('reason').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    createdBy: text('created_by').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    updatedBy: text('updated_by').notNull(),
  },
  (t) => [check('workload_policy_exceptions_scope_check', sql`${t.workloadName} is null or ${t.kind} is not null`)],
);
