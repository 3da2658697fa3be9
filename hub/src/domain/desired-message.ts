/**
 * The desired message of one object in one cluster, as the relay publishes it: the envelope
 * (cluster, identity, revision, generation, tombstone flag) around the rendered manifest. Pure;
 * the repository stores it as JSON text in the outbox, the size check measures it.
 */
import { PROTOCOL_VERSION, type DesiredMessage } from '@flotilla/api';
import type { DesiredChange } from './desired-plan.js';
import type { WorkloadIdentity } from './manifest.js';

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
