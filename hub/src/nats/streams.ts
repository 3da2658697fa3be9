/**
 * The JetStream layout the protocol relies on, created or updated at hub start:
 * - DESIRED: one message per subject (the last desired value of each object of each cluster);
 *   `duplicate_window` lets the relay republish after a crash without duplicates.
 * - STATUS: status reports and heartbeats, also one per subject, so a backlog while the hub is
 *   down is already coalesced per object; the hub reads it through one durable consumer.
 */
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import {
  DESIRED_PREFIX,
  DESIRED_STREAM,
  HEARTBEAT_PREFIX,
  HUB_STATUS_CONSUMER,
  STATUS_PREFIX,
  STATUS_STREAM,
} from '@flotilla/api';

const NANOS_PER_MS = 1_000_000;

export function desiredStreamConfig(replicas: number): Partial<StreamConfig> & { name: string } {
  return {
    name: DESIRED_STREAM,
    subjects: [`${DESIRED_PREFIX}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_msgs_per_subject: 1,
    discard: DiscardPolicy.Old,
    duplicate_window: 2 * 60 * 1000 * NANOS_PER_MS,
    num_replicas: replicas,
  };
}

export function statusStreamConfig(replicas: number): Partial<StreamConfig> & { name: string } {
  return {
    name: STATUS_STREAM,
    subjects: [`${STATUS_PREFIX}.>`, `${HEARTBEAT_PREFIX}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_msgs_per_subject: 1,
    max_age: 24 * 60 * 60 * 1000 * NANOS_PER_MS,
    discard: DiscardPolicy.Old,
    num_replicas: replicas,
  };
}

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  try {
    await jsm.streams.info(config.name);
  } catch {
    await jsm.streams.add(config);
    return;
  }
  await jsm.streams.update(config.name, config);
}

/** Creates or updates both streams and the hub's durable status consumer. */
export async function ensureStreams(jsm: JetStreamManager, replicas: number): Promise<void> {
  await ensureStream(jsm, desiredStreamConfig(replicas));
  await ensureStream(jsm, statusStreamConfig(replicas));
  await jsm.consumers.add(STATUS_STREAM, {
    durable_name: HUB_STATUS_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: 30_000 * NANOS_PER_MS,
    max_ack_pending: 20_000,
    max_deliver: -1,
  });
}
