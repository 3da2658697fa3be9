import { sql } from 'drizzle-orm';
import type { MaintenanceWindow } from '@flotilla/api';
import { bigint, boolean, check, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

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
    /** The agent's user nkey (public key only; the seed never leaves the cluster). */
    agentPublicKey: text('agent_public_key'),
    /** The cluster's NATS account (public key only; nobody holds its seed). */
    accountPublicKey: text('account_public_key'),
    /** User keys revoked in the account (re-key) → unix seconds; pushed in the account JWT. */
    revokedKeys: jsonb('revoked_keys').$type<Record<string, number>>().notNull().default({}),
    /** The newest user JWT issued: its id and expiry (never the JWT). */
    credentialId: text('credential_id'),
    credentialExpiresAt: timestamp('credential_expires_at', { withTimezone: true }),
    /** The `ts` of the last signed request accepted from the agent: later ones must be newer. */
    lastSignedRequestMs: bigint('last_signed_request_ms', { mode: 'number' }).notNull().default(0),
    agentVersion: text('agent_version'),
    kubernetesVersion: text('kubernetes_version'),
    lastHeartbeatAt: timestamp('last_heartbeat_at', { withTimezone: true }),
    /** linkId of the newest heartbeat: a change means the agent's link restarted (republish). */
    agentLinkId: text('agent_link_id'),
    /** The link id the cluster's desired objects were last republished for (or its first link). */
    linkRepublishedFor: text('link_republished_for'),
    /** When they were last republished: at most one republish per FLOTILLA_LINK_REPUBLISH_INTERVAL. */
    linkRepublishedAt: timestamp('link_republished_at', { withTimezone: true }),
    /** When a rollout may start updating the cluster (validated at the API); empty: always. */
    maintenanceWindows: jsonb('maintenance_windows').$type<MaintenanceWindow[]>().notNull().default([]),
    /** The cluster's Prometheus the hub asks for metric analysis (no credentials in it); null: none. */
    prometheusUrl: text('prometheus_url'),
    /** The name of a file in FLOTILLA_PROMETHEUS_SECRETS_DIR holding its bearer token; never the token. */
    prometheusTokenRef: text('prometheus_token_ref'),
    /** Files in that directory holding its basic-auth username and password (both or neither). */
    prometheusUsernameRef: text('prometheus_username_ref'),
    prometheusPasswordRef: text('prometheus_password_ref'),
    /** A file in that directory holding the PEM CA bundle that verifies its https URL; null: system CAs. */
    prometheusCaRef: text('prometheus_ca_ref'),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check('clusters_state_check', sql`${t.state} in ('pending', 'accepted', 'removed')`),
    index('clusters_state_idx').on(t.state),
  ],
);
