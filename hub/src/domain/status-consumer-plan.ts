/**
 * Decides what the hub does with its own durable on the STATUS stream at start. Pure: the caller
 * reads the durable (nats/status-consumer.ts) and acts on the decision.
 *
 * Storage and replicas cannot be changed on a durable in place, so a durable made under another
 * setup is deleted and made again. The STATUS stream keeps its messages by limits, not by
 * acknowledgement (one per subject, the newest), so everything the old durable had not yet seen
 * acknowledged is still in the stream, above its ack floor: every message at or below the ack
 * floor was acknowledged, and the hub acknowledges a message only after storing it. The new
 * durable therefore starts at the ack floor + 1. Messages above the floor that were already
 * acknowledged (acks arrive out of order) or delivered to a replica that has not acknowledged them
 * yet are delivered again; a report replaces the stored one only when it is newer (status-repo.ts),
 * so a repeat changes nothing. A message the stream dropped above the floor was replaced by a newer
 * one on its subject, which is above the floor too.
 */
import type { AgentDurableSetup } from './agent-consumer-plan.js';

/** What the hub reads of its durable. */
export interface StatusDurableView {
  memory: boolean;
  /** Its replicas (the stream's when it names none). */
  replicas: number;
  ackWaitMs: number;
  maxAckPending: number;
  maxDeliver: number;
  /** The stream sequence at and below which every message was acknowledged (0: none yet). */
  ackFloor: number;
}

/** How the hub's status durable is tuned (updated in place when an existing one differs). */
export interface StatusDurableTuning {
  ackWaitMs: number;
  maxAckPending: number;
  /** -1: redelivered until stored; a report is never given up on. */
  maxDeliver: number;
}

export const STATUS_DURABLE_TUNING: StatusDurableTuning = { ackWaitMs: 30_000, maxAckPending: 20_000, maxDeliver: -1 };

export type StatusDurableDrift = 'storage' | 'replicas';

/** Where a (re)made durable starts: the whole stream, or after what the old one had acknowledged. */
export type StatusDurableStart = { from: 'all' } | { from: 'sequence'; sequence: number };

export type StatusDurableDecision =
  | { action: 'create'; start: StatusDurableStart }
  | { action: 'unchanged' }
  | { action: 'update' }
  | { action: 'remake'; drift: StatusDurableDrift[]; start: StatusDurableStart };

/** The first message a durable that replaces one with this ack floor must deliver. */
export function startAfter(ackFloor: number): StatusDurableStart {
  return ackFloor > 0 ? { from: 'sequence', sequence: ackFloor + 1 } : { from: 'all' };
}

/**
 * `existing`: the durable as it is (undefined: none). `resumeAfter`: the ack floor of a durable
 * this start already deleted (a start retried between the delete and the create), so that the
 * new one still starts after it rather than from the whole stream.
 */
export function decideStatusDurable(
  existing: StatusDurableView | undefined,
  setup: AgentDurableSetup,
  tuning: StatusDurableTuning = STATUS_DURABLE_TUNING,
  resumeAfter?: number,
): StatusDurableDecision {
  if (!existing) return { action: 'create', start: startAfter(resumeAfter ?? 0) };
  const drift: StatusDurableDrift[] = [];
  if (existing.memory !== setup.memory) drift.push('storage');
  if (existing.replicas !== setup.replicas) drift.push('replicas');
  if (drift.length > 0) return { action: 'remake', drift, start: startAfter(existing.ackFloor) };
  const tuned =
    existing.ackWaitMs === tuning.ackWaitMs &&
    existing.maxAckPending === tuning.maxAckPending &&
    existing.maxDeliver === tuning.maxDeliver;
  return tuned ? { action: 'unchanged' } : { action: 'update' };
}
