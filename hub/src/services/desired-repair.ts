/**
 * Puts right messages on the DESIRED stream that are not what the hub published (the watch in
 * nats/desired-watch.ts reads them): each is judged against the stored row (domain/desired-check)
 * and a foreign one is replaced by the stored value through the outbox, so the relay's ordering
 * holds; one the hub never placed anything for is the watch's to delete.
 */
import { parseDesiredSubject } from '@flotilla/api';
import type { Db } from '../db/client.js';
import { checkDesired, desiredKey, type DesiredVerdict } from '../domain/desired-check.js';
import { storedDesired, type DesiredObjectKey } from '../repositories/desired-repo.js';
import type { DesiredChanges } from './desired-sync.js';

/** A message read from the stream. */
export interface SeenDesired {
  subject: string;
  seq: number;
  data: Uint8Array;
}

/** A message that is not what the hub stored, and what to do about it. */
export interface Misplaced {
  seen: SeenDesired;
  verdict: Exclude<DesiredVerdict, { action: 'keep' }>;
}

export interface DesiredRepair {
  /** The messages of a batch that are not what the hub stored. */
  judge(batch: readonly SeenDesired[]): Promise<Misplaced[]>;
  /**
   * Queues the stored value of every misplaced message to republish, in one transaction under the
   * desired-state lock (a row gone by now leaves its message for the next look).
   */
  republish(misplaced: readonly Misplaced[]): Promise<void>;
}

export function createDesiredRepair(deps: { db: Db; desired: DesiredChanges }): DesiredRepair {
  return {
    async judge(batch) {
      const keys = batch.map((m) => parseDesiredSubject(m.subject)).filter((k): k is DesiredObjectKey => !!k);
      const stored = new Map((await storedDesired(deps.db, keys)).map((r) => [desiredKey(r.key), r.stored]));
      const out: Misplaced[] = [];
      for (const seen of batch) {
        const verdict = checkDesired(seen.subject, seen.data, (k) => stored.get(k));
        if (verdict.action !== 'keep') out.push({ seen, verdict });
      }
      return out;
    },
    async republish(misplaced) {
      const queued = misplaced.filter((m) => m.verdict.action === 'republish');
      if (queued.length === 0) return;
      await deps.desired.transaction(async (tx) => {
        await deps.desired.lock(tx);
        for (const { seen, verdict } of queued) {
          if (verdict.action === 'republish') await deps.desired.repair(tx, verdict.key, String(seen.seq));
        }
      });
    },
  };
}
