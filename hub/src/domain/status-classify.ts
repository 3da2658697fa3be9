/**
 * Classifies one message from the STATUS stream: a status report, a heartbeat, or a drop with a
 * reason. A message is foreign when its payload names another cluster or object than its
 * subject (an agent may only publish on its own subjects, but may lie in the payload), and
 * unknown when its cluster is not accepted. A report whose `reportedAt` lies further in the
 * future than the allowed clock skew (measured against when JetStream stored it) cannot be true
 * and is dropped too. Checks against what the hub placed (status-admission.ts) need the
 * database and come later. Pure, so every drop rule is unit-tested.
 */
import { decodeHeartbeat, decodeStatus, parseHeartbeatSubject, parseStatusSubject } from '@flotilla/api';
import type { TimedHeartbeat, TimedStatus } from './status-coalesce.js';

/**
 * Why the hub dropped a message (the `reason` of flotilla_hub_nats_messages_dropped_total):
 * `subject`, `json`, `schema` (unreadable), `foreign` (payload and subject disagree),
 * `unknown_cluster` (not accepted), `future_reported_at` (beyond the clock skew), and from
 * admission `not_placed` (an object the hub never placed on that cluster) and
 * `future_generation` (ahead of what the hub sent for that object), and from the ingest
 * `rate_limit` (the cluster's reports beyond its budget, domain/cluster-rate.ts).
 */
export type DropReason =
  | 'subject'
  | 'json'
  | 'schema'
  | 'foreign'
  | 'unknown_cluster'
  | 'future_reported_at'
  | 'not_placed'
  | 'future_generation'
  | 'rate_limit';

export type Classified =
  | { type: 'status'; status: TimedStatus }
  | { type: 'heartbeat'; heartbeat: TimedHeartbeat }
  | { type: 'drop'; reason: DropReason; detail: string };

export interface RawMessage {
  subject: string;
  data: Uint8Array;
  /** When JetStream stored the message (ms since epoch): the hub's clock for heartbeats. */
  storedAtMs: number;
  /** The message's stream sequence. */
  streamSequence: number;
}

export interface ClassifyOptions {
  isAccepted: (cluster: string) => boolean;
  /** How far a report's reportedAt may lie ahead of its stored time. */
  clockSkewMs: number;
}

/**
 * Postgres text cannot hold U+0000: one such string would fail the whole batch's write, again on
 * every redelivery. Messages are small and flat, so walking them is cheap.
 */
function hasNul(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('\u0000');
  if (v && typeof v === 'object') return Object.values(v).some(hasNul);
  return false;
}

const NUL_DROP: Classified = { type: 'drop', reason: 'schema', detail: 'a string contains U+0000' };

function classifyStatus(
  m: RawMessage,
  key: { cluster: string; kind: string; namespace: string; name: string },
  o: ClassifyOptions,
): Classified {
  const decoded = decodeStatus(m.data);
  if (!decoded.ok) return { type: 'drop', reason: decoded.reason, detail: decoded.detail };
  const s = decoded.value;
  if (s.cluster !== key.cluster || s.kind !== key.kind || s.namespace !== key.namespace || s.name !== key.name) {
    return { type: 'drop', reason: 'foreign', detail: `payload does not match subject ${m.subject}` };
  }
  if (!o.isAccepted(s.cluster)) return { type: 'drop', reason: 'unknown_cluster', detail: s.cluster };
  if (hasNul(s)) return NUL_DROP;
  const reportedAtMs = Date.parse(s.reportedAt);
  // Before 1970 is no clock an agent runs on, and years Postgres cannot store start there.
  if (Number.isNaN(reportedAtMs) || reportedAtMs < 0) {
    return { type: 'drop', reason: 'schema', detail: 'reportedAt is not a date after 1970' };
  }
  if (reportedAtMs > m.storedAtMs + o.clockSkewMs) {
    return {
      type: 'drop',
      reason: 'future_reported_at',
      detail: `reportedAt ${s.reportedAt} is more than ${o.clockSkewMs / 1000}s after the message was stored`,
    };
  }
  return {
    type: 'status',
    status: { message: s, reportedAtMs, storedAtMs: m.storedAtMs, streamSequence: m.streamSequence },
  };
}

export function classifyMessage(m: RawMessage, o: ClassifyOptions): Classified {
  const statusKey = parseStatusSubject(m.subject);
  if (statusKey) return classifyStatus(m, statusKey, o);
  const cluster = parseHeartbeatSubject(m.subject);
  if (cluster) {
    const decoded = decodeHeartbeat(m.data);
    if (!decoded.ok) return { type: 'drop', reason: decoded.reason, detail: decoded.detail };
    if (decoded.value.cluster !== cluster) {
      return { type: 'drop', reason: 'foreign', detail: `payload does not match subject ${m.subject}` };
    }
    if (!o.isAccepted(cluster)) return { type: 'drop', reason: 'unknown_cluster', detail: cluster };
    if (hasNul(decoded.value)) return NUL_DROP;
    return { type: 'heartbeat', heartbeat: { message: decoded.value, sentAtMs: m.storedAtMs } };
  }
  return { type: 'drop', reason: 'subject', detail: m.subject };
}

/** A batch of messages classified, ready to admit and write. */
export interface DecodedBatch {
  statuses: TimedStatus[];
  beats: TimedHeartbeat[];
  /** Messages dropped so far, by reason (counted once the batch is acknowledged). */
  drops: Map<DropReason, number>;
}

export function tally(drops: Map<DropReason, number>, reason: DropReason): void {
  drops.set(reason, (drops.get(reason) ?? 0) + 1);
}
