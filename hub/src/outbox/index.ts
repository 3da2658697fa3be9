/**
 * The outbox of one hub process: appending in writers' transactions (outbox.ts), the relay that
 * publishes committed rows and prunes sent ones (relay.ts, relay-pass.ts, retention.ts), the
 * LISTEN/NOTIFY wake-up from other replicas' commits (wakeup.ts) and the pending-rows gauge.
 * NATS stays behind the relay's publisher (nats/desired-publisher.ts).
 */
import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import type { HubMetrics } from '../metrics.js';
import { countUnsent } from '../repositories/outbox-repo.js';
import { createOutbox, type Outbox } from './outbox.js';
import { createOutboxRelay, type OutboxRelay } from './relay.js';
import type { OutboxPublisher } from './relay-pass.js';
import { listenOutbox } from './wakeup.js';

export { createOutbox, type Outbox } from './outbox.js';
export { hubSessionName } from './wakeup.js';
export type { OutboxRelay } from './relay.js';
export type { OutboxPublisher } from './relay-pass.js';

/** How often the unsent rows are counted for flotilla_hub_outbox_pending. */
const PENDING_SAMPLE_MS = 5000;

export interface OutboxOptions {
  db: Db;
  publish: OutboxPublisher;
  logger: Logger;
  metrics: HubMetrics;
  /** The relay's poll interval (writes and notifications wake it sooner). */
  intervalMs: number;
  retentionSeconds: number;
  /** false: never publish (a hub that dies right after committing); rows stay in the table. */
  relay: boolean;
  /** For the wake-up's own connection. */
  databaseUrl: string;
  /** This process's application_name: its own notifications are skipped (it hands rows over). */
  sessionName: string;
}

export interface HubOutbox {
  outbox: Outbox;
  relay: OutboxRelay;
  stop(): Promise<void>;
}

export function startOutbox(options: OutboxOptions): HubOutbox {
  const { logger, metrics } = options;
  const relay = createOutboxRelay({
    db: options.db,
    publish: options.publish,
    logger,
    metrics,
    intervalMs: options.intervalMs,
    retentionSeconds: options.retentionSeconds,
  });
  const stops: (() => Promise<void>)[] = [() => relay.stop()];
  if (options.relay) {
    relay.start();
    // Rows committed by other replicas (or by this one while another relay held the lock).
    const listener = listenOutbox({
      connectionString: options.databaseUrl,
      logger,
      onNotify: () => relay.kick(),
      ownSessionName: options.sessionName,
      onConnectionLost: () => metrics.dbConnectionsLost.inc(),
    });
    stops.unshift(() => listener.stop());
  }
  const sampler = setInterval(() => {
    countUnsent(options.db).then(
      (n) => metrics.outboxPending.set(n),
      () => undefined,
    );
  }, PENDING_SAMPLE_MS);
  sampler.unref();
  return {
    // A hub that never publishes keeps nothing for its relay: the table holds the rows.
    outbox: createOutbox({ db: options.db, ...(options.relay ? { handoff: (rows) => relay.handoff(rows) } : {}) }),
    relay,
    async stop() {
      clearInterval(sampler);
      for (const stop of stops) await stop();
    },
  };
}
