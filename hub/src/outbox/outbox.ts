/**
 * Appending to the outbox. A writer opens its transaction through `transaction` and appends the
 * messages its change announces with `appendIn`, in that same transaction, so "changed in
 * Postgres" and "queued for NATS" commit together (and roll back together). Each append also
 * queues the NOTIFY that wakes the relays of other hub replicas on commit. Once the transaction
 * committed, the outbox hands what it appended to this process's relay (`handoff`), which
 * publishes it from memory instead of reading it back; the table stays the truth and the
 * fallback (rows from other replicas, or after a restart, are read from it).
 */
import type { Db, Tx } from '../db/client.js';
import type { OutboxMessage, OutboxRecord } from '../domain/outbox-plan.js';
import { insertOutbox, notifyOutbox } from '../repositories/outbox-repo.js';

export interface Outbox {
  /**
   * Runs `work` in one transaction; the rows it appended go to this process's relay once it
   * committed. The caller decides what else the transaction holds and which locks it takes.
   */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Appends messages in a transaction opened by `transaction` (anything else is a programming
   * error: its rows would wait for the relay's poll); returns them with their ids.
   */
  appendIn(tx: Tx, messages: readonly OutboxMessage[]): Promise<OutboxRecord[]>;
}

export interface OutboxDeps {
  db: Db;
  /**
   * Takes committed rows for publishing from memory (the relay); absent: a hub that never
   * publishes, or an app without NATS, keeps nothing and the table holds the rows.
   */
  handoff?: (rows: readonly OutboxRecord[]) => void;
}

export function createOutbox(deps: OutboxDeps): Outbox {
  /** Rows appended by each open transaction, handed off when it commits. */
  const open = new Map<Tx, OutboxRecord[]>();
  return {
    async transaction(work) {
      const appended: OutboxRecord[] = [];
      const result = await deps.db.transaction(async (tx) => {
        open.set(tx, appended);
        try {
          return await work(tx);
        } finally {
          open.delete(tx);
        }
      });
      if (appended.length > 0) deps.handoff?.(appended);
      return result;
    },
    async appendIn(tx, messages) {
      const appended = open.get(tx);
      if (!appended) throw new Error('outbox rows must be appended in a transaction opened by outbox.transaction');
      if (messages.length === 0) return [];
      const rows = await insertOutbox(tx, messages);
      await notifyOutbox(tx);
      appended.push(...rows);
      return rows;
    },
  };
}
