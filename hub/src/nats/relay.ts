/**
 * The outbox relay: publishes committed outbox rows to the DESIRED stream and marks them sent.
 * Publishing happens inside a transaction holding the relay lock, and rows are marked only
 * after JetStream acknowledged them, so a crash anywhere loses nothing: unmarked rows are
 * published again by the next relay and JetStream drops the duplicates by `msgID`.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { DESIRED_STREAM } from '@flotilla/api';
import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import { tryLockRelay } from '../db/locks.js';
import { planOutboxBatch } from '../domain/outbox-plan.js';
import { markOutboxSent, unsentOutbox } from '../repositories/outbox-repo.js';
import type { HubMetrics } from '../metrics.js';
import { publishAll } from './bulk-publish.js';

export interface RelayDeps {
  db: Db;
  nc: NatsConnection;
  logger: Logger;
  metrics: HubMetrics;
  intervalMs: number;
  batchSize?: number;
}

export interface OutboxRelay {
  start(): void;
  /** Runs a pass soon (after a desired-state change). */
  kick(): void;
  /** One pass until the outbox is drained (or another replica holds the relay lock). */
  drain(): Promise<number>;
  stop(): Promise<void>;
}

const encoder = new TextEncoder();

export function createOutboxRelay(deps: RelayDeps): OutboxRelay {
  const batchSize = deps.batchSize ?? 2000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = true;
  let kicked = false;

  /** Publishes one batch; returns how many rows it covered (0: empty or locked elsewhere). */
  const pass = (): Promise<number> =>
    deps.db.transaction(async (tx) => {
      if (!(await tryLockRelay(tx))) return 0;
      const rows = await unsentOutbox(tx, batchSize);
      if (rows.length === 0) return 0;
      const plan = planOutboxBatch(rows);
      const stopTimer = deps.metrics.relayPublishSeconds.startTimer();
      await publishAll(
        deps.nc,
        DESIRED_STREAM,
        plan.publish.map((row) => ({ subject: row.subject, data: encoder.encode(row.payload), msgId: row.msgId })),
      );
      stopTimer();
      await markOutboxSent(tx, plan.markSent);
      deps.metrics.outboxPublished.inc(plan.publish.length);
      return rows.length;
    });

  const drain = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const n = await pass();
      total += n;
      if (n < batchSize) return total;
    }
  };

  const loop = (): void => {
    if (stopped) return;
    timer = undefined;
    kicked = false;
    running = drain()
      .catch((err: unknown) => deps.logger.warn({ err }, 'outbox relay pass failed; retrying'))
      .finally(() => {
        if (stopped) return;
        timer = setTimeout(loop, kicked ? 0 : deps.intervalMs);
      });
  };

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      loop();
    },
    kick() {
      kicked = true;
      if (stopped || !timer) return;
      // Only reschedule when idle (waiting on the timer); a running pass sees `kicked` when it ends.
      clearTimeout(timer);
      timer = undefined;
      loop();
    },
    drain,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
