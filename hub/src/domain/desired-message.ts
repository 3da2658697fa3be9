/**
 * The desired messages of objects in clusters, as the relay publishes them: the envelope
 * (cluster, identity, revision, generation, tombstone flag) around the rendered manifest, the
 * subject it goes to, and its JetStream msgID. Pure; the outbox stores them as they are, the
 * size check measures them.
 *
 * The msgID is `<subject>@<generation>`: a relay that publishes a row again after a crash is
 * deduplicated by the stream. A republish of a stored value carries a suffix naming why (the
 * agent link it is for, the repaired message), so the duplicate window does not swallow it,
 * while the same republish queued twice is still deduplicated.
 */
import { PROTOCOL_VERSION, desiredSubject, type DesiredMessage } from '@flotilla/api';
import type { DesiredChange } from './desired-plan.js';
import type { WorkloadIdentity } from './manifest.js';
import type { OutboxMessage } from './outbox-plan.js';

export function desiredMessage(
  identity: WorkloadIdentity,
  change: Omit<DesiredChange, 'manifestHash'>,
  now: Date,
): DesiredMessage {
  return {
    v: PROTOCOL_VERSION,
    cluster: change.cluster,
    kind: identity.kind,
    namespace: identity.namespace,
    name: identity.name,
    workloadId: identity.id,
    revision: change.revision,
    generation: change.generation,
    deleted: change.deleted,
    ...(change.manifest ? { manifest: change.manifest } : {}),
    publishedAt: now.toISOString(),
  };
}

/** The outbox messages announcing one object's desired changes, one per change. */
export function desiredChangeMessages(
  identity: WorkloadIdentity,
  changes: readonly DesiredChange[],
  now: Date,
): OutboxMessage[] {
  return changes.map((c) => {
    const subject = desiredSubject(c.cluster, identity);
    return { subject, msgId: `${subject}@${c.generation}`, payload: JSON.stringify(desiredMessage(identity, c, now)) };
  });
}

/** A stored desired row (live or tombstone) of one object in one cluster. */
export interface StoredDesiredRow {
  clusterName: string;
  kind: string;
  namespace: string;
  name: string;
  workloadId: string;
  revision: number;
  generation: number;
  deleted: boolean;
  manifest: Record<string, unknown> | null;
}

/**
 * The message of a stored row published again (a new publishedAt). `reason` is unique per
 * republish and the same for every replica queuing the same one: `link-<link id>` after an
 * agent's link restarted, `repair-<stream sequence>` for a message put right.
 */
export function republishMessage(row: StoredDesiredRow, reason: string, now: Date): OutboxMessage {
  const identity = {
    id: row.workloadId,
    kind: row.kind as WorkloadIdentity['kind'],
    namespace: row.namespace,
    name: row.name,
  };
  const subject = desiredSubject(row.clusterName, identity);
  const message = desiredMessage(
    identity,
    {
      cluster: row.clusterName,
      generation: row.generation,
      revision: row.revision,
      deleted: row.deleted,
      manifest: row.deleted ? null : row.manifest,
    },
    now,
  );
  return { subject, msgId: `${subject}@${row.generation}@${reason}`, payload: JSON.stringify(message) };
}
