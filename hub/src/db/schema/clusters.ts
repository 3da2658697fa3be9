import { sql } from 'drizzle-orm';
import { boolean, check, index, jsonb, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';

/** Member clusters. Registration is double opt-in: pending → accepted (by an operator). */
export const clusters = pgTable(
  'clusters',
  {
    name: text('name').primaryKey(),
    labels: jsonb('labels').$type<Record<string, string>>().notNull().default({}),
    state: text('state', { enum: ['pending', 'accepted', 'removed'] }).notNull(),
    /** sha256 of the one-time secret the agent presents to claim its credentials. */
    registrationSecretHash: text('registration_secret_hash').notNull(),
    /** Who registered it (token name): bootstrap info for the audit trail. */
    registeredBy: text('registered_by').notNull(),
    registeredAt: timestamp('registered_at', { withTimezone: true }).notNull().defaultNow(),
    acceptedAt: timestamp('accepted_at', { withTimezone: true }),
    acceptedBy: text('accepted_by'),
    removedAt: timestamp('removed_at', { withTimezone: true }),
    credentialsIssued: boolean('credentials_issued').notNull().default(false),
    agentVersion: text('agent_version'),
    kubernetesVersion: text('kubernetes_version'),
    lastHeartbeatAt: timestamp('last_heartbeat_at', { withTimezone: true }),
    /** linkId of the newest heartbeat: a change means the agent's link restarted (republish). */
    agentLinkId: text('agent_link_id'),
    /** The link id the cluster's desired objects were last republished for (or its first link). */
    linkRepublishedFor: text('link_republished_for'),
    /** When they were last republished: at most one republish per FLOTILLA_LINK_REPUBLISH_INTERVAL. */
    linkRepublishedAt: timestamp('link_republished_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check('clusters_state_check', sql`${t.state} in ('pending', 'accepted', 'removed')`),
    index('clusters_state_idx').on(t.state),
  ],
);

/**
 * NATS credentials of a cluster's agent. Only a bcrypt hash is stored: nats-server verifies
 * bcrypt passwords itself, so the rendered authorization file never holds a secret either.
 */
export const clusterCredentials = pgTable(
  'cluster_credentials',
  {
    id: serial('id').primaryKey(),
    clusterName: text('cluster_name')
      .notNull()
      .references(() => clusters.name, { onDelete: 'cascade' }),
    natsUser: text('nats_user').notNull(),
    passwordHash: text('password_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('cluster_credentials_cluster_idx').on(t.clusterName)],
);
