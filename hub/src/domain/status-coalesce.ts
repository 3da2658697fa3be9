/**
 * Coalescing of a batch of status reports and heartbeats before they are written: per object
 * only the newest report survives (by the protocol's status order: generation, then the stream's
 * stored time and sequence), per cluster only the latest heartbeat. A batch of 1,000 reports
 * about 10 objects becomes 10 row writes.
 */
import { isNewerStatus, type HeartbeatMessage, type StatusMessage } from '@flotilla/api';

export interface TimedStatus {
  message: StatusMessage;
  /** The agent's reportedAt (informational: shown, never used to order). */
  reportedAtMs: number;
  /** When JetStream stored the report (ms, sub-millisecond part kept). */
  storedAtMs: number;
  /** The report's stream sequence. */
  streamSequence: number;
}

/** One key per (cluster, kind, namespace, name). */
export function statusKey(m: { cluster: string; kind: string; namespace: string; name: string }): string {
  return `${m.cluster}\u0000${m.kind}\u0000${m.namespace}\u0000${m.name}`;
}

function orderKey(s: TimedStatus): { generation: number; storedAtMs: number; streamSequence: number } {
  return { generation: s.message.generation, storedAtMs: s.storedAtMs, streamSequence: s.streamSequence };
}

export function coalesceStatus(reports: readonly TimedStatus[]): TimedStatus[] {
  const newest = new Map<string, TimedStatus>();
  for (const r of reports) {
    const key = statusKey(r.message);
    const prev = newest.get(key);
    if (!prev || isNewerStatus(orderKey(prev), orderKey(r))) newest.set(key, r);
  }
  return [...newest.values()];
}

export interface TimedHeartbeat {
  message: HeartbeatMessage;
  /** When JetStream stored it, in ms with the sub-millisecond part kept. */
  sentAtMs: number;
}

/** Batches come in stream order, so on a tie the later heartbeat wins. */
export function coalesceHeartbeats(beats: readonly TimedHeartbeat[]): TimedHeartbeat[] {
  const newest = new Map<string, TimedHeartbeat>();
  for (const b of beats) {
    const prev = newest.get(b.message.cluster);
    if (!prev || b.sentAtMs >= prev.sentAtMs) newest.set(b.message.cluster, b);
  }
  return [...newest.values()];
}

/**
 * An ISO timestamp with microseconds (Postgres keeps them): two heartbeats JetStream stored in
 * the same millisecond still order, where a Date would make them equal and drop the later one.
 */
export function isoMicros(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.min(999, Math.floor((ms - whole) * 1000));
  return new Date(whole).toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`);
}
