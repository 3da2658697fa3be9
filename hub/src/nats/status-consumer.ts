/**
 * The hub's durable on the STATUS stream, made or brought in line at start
 * (domain/status-consumer-plan.ts decides): created when absent; tuned in place; made again, from
 * after the old one's ack floor, when its storage or replicas differ from the hub's setting. Hub
 * replicas starting at the same time may both do this: an ack floor only grows, so whichever
 * durable ends up in place starts at or below the last message any of them had not acknowledged.
 */
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type ConsumerConfig,
  type ConsumerInfo,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { HUB_STATUS_CONSUMER, STATUS_STREAM } from '@flotilla/api';
import type { AgentDurableSetup } from '../domain/agent-consumer-plan.js';
import {
  STATUS_DURABLE_TUNING,
  decideStatusDurable,
  type StatusDurableDrift,
  type StatusDurableStart,
  type StatusDurableView,
} from '../domain/status-consumer-plan.js';

const NANOS_PER_MS = 1_000_000;

export type StatusDurableOutcome =
  | { action: 'created' | 'unchanged' | 'updated'; start?: StatusDurableStart }
  | { action: 'remade'; drift: StatusDurableDrift[]; start: StatusDurableStart };

/**
 * Kept by the caller across retries of one start: the ack floor of a durable this start deleted,
 * so that a retry after the delete still makes the new one start after it.
 */
export interface StatusDurableResume {
  ackFloor?: number;
}

function tuningConfig(): Partial<ConsumerConfig> {
  return {
    ack_wait: STATUS_DURABLE_TUNING.ackWaitMs * NANOS_PER_MS,
    max_ack_pending: STATUS_DURABLE_TUNING.maxAckPending,
    max_deliver: STATUS_DURABLE_TUNING.maxDeliver,
  };
}

/** The hub's status durable: every message of the stream from `start`, acknowledged one by one. */
export function statusConsumerConfig(
  setup: AgentDurableSetup,
  start: StatusDurableStart,
): Partial<ConsumerConfig> & { durable_name: string } {
  return {
    durable_name: HUB_STATUS_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    ...(start.from === 'all'
      ? { deliver_policy: DeliverPolicy.All }
      : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start.sequence }),
    ...tuningConfig(),
    mem_storage: setup.memory,
    num_replicas: setup.replicas,
  };
}

/** `streamReplicas`: what a durable naming no replicas has. */
export function statusDurableView(info: ConsumerInfo, streamReplicas: number): StatusDurableView {
  const c = info.config;
  return {
    memory: c.mem_storage === true,
    replicas: c.num_replicas || streamReplicas,
    ackWaitMs: Math.round((c.ack_wait ?? 0) / NANOS_PER_MS),
    maxAckPending: c.max_ack_pending ?? 0,
    maxDeliver: c.max_deliver ?? -1,
    ackFloor: info.ack_floor.stream_seq,
  };
}

async function info(jsm: JetStreamManager): Promise<ConsumerInfo | undefined> {
  try {
    return await jsm.consumers.info(STATUS_STREAM, HUB_STATUS_CONSUMER);
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound) return undefined;
    throw err;
  }
}

/**
 * Creates the durable; another hub replica creating one at the same time is fine when what it
 * made has the right storage and replicas (its start may differ: both start at or below the floor).
 */
async function create(
  jsm: JetStreamManager,
  setup: AgentDurableSetup,
  start: StatusDurableStart,
  streamReplicas: number,
): Promise<void> {
  try {
    await jsm.consumers.add(STATUS_STREAM, statusConsumerConfig(setup, start));
  } catch (err) {
    const existing = await info(jsm);
    const decision = existing && decideStatusDurable(statusDurableView(existing, streamReplicas), setup);
    if (!decision || decision.action === 'remake') throw err;
  }
}

export async function ensureStatusConsumer(
  jsm: JetStreamManager,
  setup: AgentDurableSetup,
  streamReplicas: number,
  resume: StatusDurableResume = {},
): Promise<StatusDurableOutcome> {
  const existing = await info(jsm);
  const decision = decideStatusDurable(
    existing && statusDurableView(existing, streamReplicas),
    setup,
    STATUS_DURABLE_TUNING,
    resume.ackFloor,
  );
  switch (decision.action) {
    case 'unchanged':
      return { action: 'unchanged' };
    case 'update':
      await jsm.consumers.update(STATUS_STREAM, HUB_STATUS_CONSUMER, tuningConfig());
      return { action: 'updated' };
    case 'create':
      await create(jsm, setup, decision.start, streamReplicas);
      return { action: 'created', start: decision.start };
    case 'remake': {
      resume.ackFloor = decision.start.from === 'sequence' ? decision.start.sequence - 1 : 0;
      try {
        await jsm.consumers.delete(STATUS_STREAM, HUB_STATUS_CONSUMER);
      } catch (err) {
        if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound)) throw err;
      }
      await create(jsm, setup, decision.start, streamReplicas);
      return { action: 'remade', drift: decision.drift, start: decision.start };
    }
  }
}
