/** The outbox: unsent rows in id order, marked sent after a successful publish. */
import { and, asc, count, inArray, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client.js';
import { outbox } from '../db/schema/index.js';

export type OutboxRecord = Pick<typeof outbox.$inferSelect, 'id' | 'subject' | 'msgId' | 'payload'>;

export async function unsentOutbox(db: DbOrTx, limit: number): Promise<OutboxRecord[]> {
  return db
    .select({ id: outbox.id, subject: outbox.subject, msgId: outbox.msgId, payload: outbox.payload })
    .from(outbox)
    .where(isNull(outbox.sentAt))
    .orderBy(asc(outbox.id))
    .limit(limit);
}

export async function markOutboxSent(db: DbOrTx, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .update(outbox)
    .set({ sentAt: sql`now()` })
    .where(and(inArray(outbox.id, [...ids]), isNull(outbox.sentAt)));
}

export async function countUnsent(db: DbOrTx): Promise<number> {
  const [row] = await db.select({ n: count() }).from(outbox).where(isNull(outbox.sentAt));
  return row?.n ?? 0;
}
