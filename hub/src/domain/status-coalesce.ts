/**
 * Coalescing of a batch of status reports and heartbeats before they are written: per object
 * only the newest report survives (by the protocol's status order), per cluster only the latest
 * heartbeat. A batch of 1,000 reports about 10 objects becomes 10 row writes.
 */
import { isNewerStatus, type HeartbeatMessage, type StatusMessage } from '@flotilla/api';

export interface TimedStatus {
  message: StatusMessage;
  reportedAtMs: number;
}

function statusKey(m: StatusMessage): string {
  return `${m.cluster}\u0000${m.kind}\u0000${m.namespace}\u0000${m.name}`;
}

function orderKey(s: TimedStatus): { generation: number; observedGeneration: number; reportedAtMs: number } {
  return {
    generation: s.message.generation,
    observedGeneration: s.message.observedGeneration,
    reportedAtMs: s.reportedAtMs,
  };
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
  sentAtMs: number;
}

export function coalesceHeartbeats(beats: readonly TimedHeartbeat[]): TimedHeartbeat[] {
  const newest = new Map<string, TimedHeartbeat>();
  for (const b of beats) {
    const prev = newest.get(b.message.cluster);
    if (!prev || b.sentAtMs > prev.sentAtMs) newest.set(b.message.cluster, b);
  }
  return [...newest.values()];
}
