/**
 * The outbox table: rows appended in the writer's transaction (with a NOTIFY that Postgres
 * delivers on commit), unsent rows read in id order, marked sent once JetStream stored them (or
 * a newer row of their subject), held back for a while when refused, and deleted once they have
 * been sent for longer than the retention (JetStream holds the messages from then on).
 */
import { count, isNull, sql, type SQLWrapper } from 'drizzle-orm';
import type pg from 'pg';
import type { DbOrTx } from '../db/client.js';
import { outbox } from '../db/schema/index.js';
import type { OutboxMessage, OutboxRecord, OutboxSettlement } from '../domain/outbox-plan.js';
import { jsonTexts } from './json-param.js';

/** The channel writers notify and every hub replica's relay listens on. */
const OUTBOX_CHANNEL = 'flotilla_outbox';

/** Appends rows (one statement for any number); returns them with their ids. */
export async function insertOutbox(db: DbOrTx, messages: readonly OutboxMessage[]): Promise<OutboxRecord[]> {
  if (messages.length === 0) return [];
  const col = (f: (m: OutboxMessage) => string): SQLWrapper => sql.param(messages.map(f));
  const res = await db.execute<{ id: string; msg_id: string }>(sql`
    insert into ${outbox} (subject, msg_id, payload)
    select * from rows from (unnest(${col((m) => m.subject)}::text[], ${col((m) => m.msgId)}::text[]),
                             json_array_elements_text(${jsonTexts(messages.map((m) => m.payload))}::json))
    returning id, msg_id`);
  // Matched by msg_id (unique within one write) rather than trusting the order RETURNING yields.
  const ids = new Map(res.rows.map((r) => [r.msg_id, Number(r.id)]));
  return messages.map((m) => ({ ...m, id: ids.get(m.msgId)! }));
}

/**
 * Queues the relays' wake-up in `tx`; Postgres delivers it when (and only if) the transaction
 * commits. The payload names the writing session's application_name, so a replica can skip its
 * own notifications.
 */
export async function notifyOutbox(tx: DbOrTx): Promise<void> {
  await tx.execute(sql`select pg_notify(${OUTBOX_CHANNEL}, current_setting('application_name'))`);
}

/** Subscribes a dedicated connection to the outbox channel (its 'notification' events follow). */
export async function listenOnOutboxChannel(client: pg.ClientBase): Promise<void> {
  await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
}

/** An unsent row's id, and how often it was refused before. */
export interface DueOutboxId {
  id: number;
  attempts: number;
}

/**
 * Ids of unsent rows that are due, in order: rows held back after a refusal are skipped until
 * their retry time, so they never keep later rows from being read. (The payloads are not read:
 * they may already be in memory.)
 */
export async function dueOutboxIds(db: DbOrTx, limit: number): Promise<DueOutboxId[]> {
  const res = await db.execute<{ id: string; attempts: number }>(sql`
    select id, attempts from ${outbox}
     where sent_at is null and (retry_at is null or retry_at <= clock_timestamp())
     order by id limit ${limit}`);
  return res.rows.map((r) => ({ id: Number(r.id), attempts: r.attempts }));
}

export async function outboxRowsById(db: DbOrTx, ids: readonly number[]): Promise<OutboxRecord[]> {
  if (ids.length === 0) return [];
  const res = await db.execute<{ id: string; subject: string; msg_id: string; payload: string }>(sql`
    select id, subject, msg_id, payload from ${outbox} where id = any(${sql.param([...ids])}::bigint[])`);
  return res.rows.map((r) => ({ id: Number(r.id), subject: r.subject, msgId: r.msg_id, payload: r.payload }));
}

/**
 * Applies a published batch's settlement (domain/outbox-plan.ts) and returns the ids it marked
 * sent: every acknowledged row, and every older unsent row of a subject whose row was
 * acknowledged or refused. Refused rows get their next attempt time and the refusal's reason.
 * Older rows of a subject are either in the batch or held back, so they all lie at or below the
 * batch's highest id: the bound keeps the statement on the unsent index.
 */
export async function settleOutbox(db: DbOrTx, settlement: OutboxSettlement): Promise<number[]> {
  const settled = [
    ...settlement.acked.map((r) => ({ ...r, inclusive: true })),
    ...settlement.refused.map((r) => ({ ...r, inclusive: false })),
  ];
  if (settled.length === 0) return [];
  const col = <T>(f: (r: (typeof settled)[number]) => T): SQLWrapper => sql.param(settled.map(f));
  const upTo = settled.reduce((max, r) => Math.max(max, r.id), 0);
  const marked = await db.execute<{ id: string }>(sql`
    update ${outbox} o set sent_at = clock_timestamp()
      from unnest(${col((r) => r.subject)}::text[], ${col((r) => r.id)}::bigint[], ${col((r) => r.inclusive)}::bool[])
           as s(subject, id, inclusive)
     where o.sent_at is null and o.id <= ${upTo} and o.subject = s.subject
       and (o.id < s.id or (s.inclusive and o.id = s.id))
    returning o.id`);
  const refused = settlement.refused;
  if (refused.length > 0) {
    const rcol = <T>(f: (r: (typeof refused)[number]) => T): SQLWrapper => sql.param(refused.map(f));
    await db.execute(sql`
      update ${outbox} o
         set attempts = o.attempts + 1, refused_reason = r.reason,
             retry_at = clock_timestamp() + make_interval(secs => r.retry_ms / 1000.0)
        from unnest(${rcol((r) => r.id)}::bigint[], ${rcol((r) => `${r.reason}: ${r.detail}`)}::text[],
                    ${rcol((r) => r.retryMs)}::int[]) as r(id, reason, retry_ms)
       where o.id = r.id and o.sent_at is null`);
  }
  return marked.rows.map((r) => Number(r.id));
}

/**
 * Makes every row held back after a refusal due now. A hub start may bring new limits (its own
 * stream settings, nats-server's max_payload), so what was refused is tried again at once.
 */
export async function releaseRefusedOutbox(db: DbOrTx): Promise<number> {
  const res = await db.execute(sql`
    update ${outbox} set retry_at = null where sent_at is null and retry_at is not null`);
  return res.rowCount ?? 0;
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
