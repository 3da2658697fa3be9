/**
 * The outbox: unsent rows in id order, marked sent after a successful publish, and deleted once
 * they have been sent for longer than the retention (JetStream holds the messages from then on).
 */
import { count, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client.js';
import { outbox } from '../db/schema/index.js';

/** An unsent row; the payload stays JSON text, exactly what is published. */
export interface OutboxRecord {
  id: number;
  subject: string;
  msgId: string;
  payload: string;
}

/** Ids of unsent rows in order (an index-only read: the payloads may already be in memory). */
export async function unsentOutboxIds(db: DbOrTx, limit: number): Promise<number[]> {
  const res = await db.execute<{ id: string }>(sql`
    select id from ${outbox} where sent_at is null order by id limit ${limit}`);
  return res.rows.map((r) => Number(r.id));
}

export async function outboxRowsById(db: DbOrTx, ids: readonly number[]): Promise<OutboxRecord[]> {
  if (ids.length === 0) return [];
  const res = await db.execute<{ id: string; subject: string; msg_id: string; payload: string }>(sql`
    select id, subject, msg_id, payload from ${outbox} where id = any(${sql.param([...ids])}::bigint[])`);
  return res.rows.map((r) => ({ id: Number(r.id), subject: r.subject, msgId: r.msg_id, payload: r.payload }));
}

export async function markOutboxSent(db: DbOrTx, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.execute(
    sql`update ${outbox} set sent_at = clock_timestamp() where id = any(${sql.param([...ids])}::bigint[]) and sent_at is null`,
  );
}

export async function countUnsent(db: DbOrTx): Promise<number> {
  const [row] = await db.select({ n: count() }).from(outbox).where(isNull(outbox.sentAt));
  return row?.n ?? 0;
}

/**
 * Deletes up to `limit` rows sent more than `retentionSeconds` ago and returns how many. Unsent
 * rows are never touched, however old: they are work the relay still owes.
 */
export async function pruneSentOutbox(db: DbOrTx, retentionSeconds: number, limit: number): Promise<number> {
  const res = await db.execute(sql`
    delete from ${outbox} where id in (
      select id from ${outbox}
       where sent_at is not null and sent_at < clock_timestamp() - make_interval(secs => ${retentionSeconds})
       order by id limit ${limit})`);
  return res.rowCount ?? 0;
}
