/**
 * The outbox relay's publisher over NATS: the rows' JSON payloads go to the DESIRED stream with
 * their msgIDs through one bulk publish (bulk-publish.ts), one outcome per row.
 */
import { DESIRED_STREAM } from '@flotilla/api';
import type { NatsConnection } from '@nats-io/transport-node';
import type { OutboxPublisher } from '../outbox/relay-pass.js';
import { publishAll } from './bulk-publish.js';

export function desiredPublisher(nc: NatsConnection): OutboxPublisher {
  const encoder = new TextEncoder();
  return (rows) =>
    publishAll(
      nc,
      DESIRED_STREAM,
      rows.map((row) => ({ subject: row.subject, data: encoder.encode(row.payload), msgId: row.msgId })),
    );
}
