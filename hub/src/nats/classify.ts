/**
 * Classifies one message from the STATUS stream: a status report, a heartbeat, or a drop with a
 * reason. A message is foreign when its payload names another cluster or object than its
 * subject (an agent may only publish on its own subjects, but may lie in the payload), and
 * unknown when its cluster is not accepted. Pure, so every drop rule is unit-tested.
 */
import { decodeHeartbeat, decodeStatus, parseHeartbeatSubject, parseStatusSubject } from '@flotilla/api';
import type { TimedHeartbeat, TimedStatus } from '../domain/status-coalesce.js';

export type DropReason = 'subject' | 'json' | 'schema' | 'foreign' | 'unknown_cluster';

export type Classified =
  | { type: 'status'; status: TimedStatus }
  | { type: 'heartbeat'; heartbeat: TimedHeartbeat }
  | { type: 'drop'; reason: DropReason; detail: string };

export interface RawMessage {
  subject: string;
  data: Uint8Array;
  /** When JetStream stored the message (ms since epoch): the hub's clock for heartbeats. */
  storedAtMs: number;
}

export function classifyMessage(m: RawMessage, isAccepted: (cluster: string) => boolean): Classified {
  const statusKey = parseStatusSubject(m.subject);
  if (statusKey) {
    const decoded = decodeStatus(m.data);
    if (!decoded.ok) return { type: 'drop', reason: decoded.reason, detail: decoded.detail };
    const s = decoded.value;
    if (
      s.cluster !== statusKey.cluster ||
      s.kind !== statusKey.kind ||
      s.namespace !== statusKey.namespace ||
      s.name !== statusKey.name
    ) {
      return { type: 'drop', reason: 'foreign', detail: `payload does not match subject ${m.subject}` };
    }
    if (!isAccepted(s.cluster)) return { type: 'drop', reason: 'unknown_cluster', detail: s.cluster };
    const reportedAtMs = Date.parse(s.reportedAt);
    if (Number.isNaN(reportedAtMs)) return { type: 'drop', reason: 'schema', detail: 'reportedAt is not a date' };
    return { type: 'status', status: { message: s, reportedAtMs } };
  }
  const cluster = parseHeartbeatSubject(m.subject);
  if (cluster) {
    const decoded = decodeHeartbeat(m.data);
    if (!decoded.ok) return { type: 'drop', reason: decoded.reason, detail: decoded.detail };
    if (decoded.value.cluster !== cluster) {
      return { type: 'drop', reason: 'foreign', detail: `payload does not match subject ${m.subject}` };
    }
    if (!isAccepted(cluster)) return { type: 'drop', reason: 'unknown_cluster', detail: cluster };
    return { type: 'heartbeat', heartbeat: { message: decoded.value, sentAtMs: m.storedAtMs } };
  }
  return { type: 'drop', reason: 'subject', detail: m.subject };
}
