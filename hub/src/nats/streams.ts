/**
 * The JetStream layout the protocol relies on, created or updated at hub start (so limits changed
 * in the config reach existing streams):
 * - DESIRED: one message per subject (the last desired value of each object of each cluster);
 *   `duplicate_window` lets the relay republish after a crash without duplicates. Bounded in
 *   messages, bytes and message size; when full it refuses new subjects (`discard: New`) rather
 *   than dropping the oldest objects' desired state, while a new value for an object already held
 *   still replaces the old one. The relay keeps a refused row and retries it.
 * - STATUS: status reports and heartbeats, also one per subject, so a backlog while the hub is
 *   down is already coalesced per object; the hub reads it through one durable consumer. Bounded
 *   the same way; when full the oldest go (`discard: Old`): agents resend their status. Its
 *   messages stay when acknowledged (limits retention), which is what lets the hub's durable be
 *   made again from its ack floor (nats/status-consumer.ts).
 */
import {
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { DESIRED_PREFIX, DESIRED_STREAM, HEARTBEAT_PREFIX, STATUS_PREFIX, STATUS_STREAM } from '@flotilla/api';
import type { StreamLimits } from '../config.js';
import type { AgentDurableSetup } from '../domain/agent-consumer-plan.js';
import { ensureStatusConsumer, type StatusDurableOutcome, type StatusDurableResume } from './status-consumer.js';

const NANOS_PER_MS = 1_000_000;

type NamedStreamConfig = Partial<StreamConfig> & { name: string };

function bounds(limits: StreamLimits): Partial<StreamConfig> {
  return { max_msgs: limits.maxMsgs, max_bytes: limits.maxBytes, max_msg_size: limits.maxMsgSize };
}

export function desiredStreamConfig(replicas: number, limits: StreamLimits): NamedStreamConfig {
  return {
    name: DESIRED_STREAM,
    subjects: [`${DESIRED_PREFIX}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_msgs_per_subject: 1,
    ...bounds(limits),
    discard: DiscardPolicy.New,
    // Per-subject "discard new" would refuse every update of an object already held.
    discard_new_per_subject: false,
    duplicate_window: 2 * 60 * 1000 * NANOS_PER_MS,
    num_replicas: replicas,
  };
}

export function statusStreamConfig(replicas: number, limits: StreamLimits): NamedStreamConfig {
  return {
    name: STATUS_STREAM,
    subjects: [`${STATUS_PREFIX}.>`, `${HEARTBEAT_PREFIX}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_msgs_per_subject: 1,
    ...bounds(limits),
    max_age: 24 * 60 * 60 * 1000 * NANOS_PER_MS,
    discard: DiscardPolicy.Old,
    num_replicas: replicas,
  };
}

async function ensureStream(jsm: JetStreamManager, config: NamedStreamConfig): Promise<void> {
  try {
    await jsm.streams.info(config.name);
  } catch {
    await jsm.streams.add(config);
    return;
  }
  await jsm.streams.update(config.name, config);
}

export interface StreamSettings {
  /** Stream replicas (1 for a single server, 3 for a NATS cluster). */
  replicas: number;
  desired: StreamLimits;
  status: StreamLimits;
  /** How the hub's status durable keeps its state (default: memory, at the streams' replicas). */
  statusDurable?: AgentDurableSetup;
  /** Kept by the caller across retries of one start (nats/status-consumer.ts). */
  statusDurableResume?: StatusDurableResume;
}

/** Creates or updates both streams and the hub's durable status consumer; says what it did to the durable. */
export async function ensureStreams(jsm: JetStreamManager, settings: StreamSettings): Promise<StatusDurableOutcome> {
  await ensureStream(jsm, desiredStreamConfig(settings.replicas, settings.desired));
  await ensureStream(jsm, statusStreamConfig(settings.replicas, settings.status));
  return ensureStatusConsumer(
    jsm,
    settings.statusDurable ?? { memory: true, replicas: settings.replicas },
    settings.replicas,
    settings.statusDurableResume,
  );
}
