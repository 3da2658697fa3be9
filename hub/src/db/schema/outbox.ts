import { sql } from 'drizzle-orm';
import { bigserial, index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Messages committed with the change that caused them; the relay publishes and marks them. */
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
  },
  (t) => [
    index('outbox_unsent_idx')
      .on(t.id)
      .where(sql`${t.sentAt} is null`),
  ],
);
