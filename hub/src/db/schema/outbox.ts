import { sql } from 'drizzle-orm';
import { bigserial, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Messages committed with the change that caused them; the relay publishes and marks them, and
 * holds back a refused one (domain/outbox-plan.ts).
 */
export const outbox = pgTable(
  'outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    subject: text('subject').notNull(),
    /** JetStream Nats-Msg-Id: a republish after a crash is deduplicated by the stream. */
    msgId: text('msg_id').notNull(),
    /** The message as published (JSON text): stored and sent byte for byte, never re-encoded. */
    payload: text('payload').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    sentAt: timestamp('sent_at', { withTimezone: true }),
    /** How often JetStream (or the client) refused the message; sets the backoff. */
    attempts: integer('attempts').notNull().default(0),
    /** A refused row is held back until then; later rows are published meanwhile. */
    retryAt: timestamp('retry_at', { withTimezone: true }),
    /** The last refusal's description (the server's words, never the payload). */
    refusedReason: text('refused_reason'),
  },
  (t) => [
    index('outbox_unsent_idx')
      .on(t.id)
      .where(sql`${t.sentAt} is null`),
  ],
);
