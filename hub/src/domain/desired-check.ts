/**
 * Judges a message on the DESIRED stream against what the hub stored for its subject. Pure: the
 * caller decodes nothing and loads the stored rows; the verdict says what to do.
 *
 * Only the hub publishes desired state, but the stream can hold other things: nats-server
 * publishes the answer of a JetStream API request to whatever reply subject the requester named,
 * and an agent may name another cluster's desired subject (the answer then becomes that
 * object's last value). Content cannot be chosen that way, so anything that is not exactly what
 * the hub stored is put right from Postgres.
 */
import {
  decodeDesired,
  desiredSubject,
  parseDesiredSubject,
  type DesiredMessage,
  type ParsedObjectSubject,
} from '@flotilla/api';
import { contentHash } from './canonical-json.js';
import { TOMBSTONE_HASH } from './desired-plan.js';

/** The stored desired row of one object in one cluster (the fields a message must match). */
export interface StoredDesired {
  workloadId: string;
  revision: number;
  generation: number;
  deleted: boolean;
  manifestHash: string;
}

/** Why a message was put right (the repair metric's label). */
export type RepairReason = 'invalid' | 'mismatch' | 'unknown';

export type DesiredVerdict =
  /** What the hub published (or an older generation the relay is about to replace). */
  | { action: 'keep' }
  /** Publish the stored value again. */
  | { action: 'republish'; reason: Exclude<RepairReason, 'unknown'>; key: ParsedObjectSubject }
  /** The hub never placed anything there: delete the message. */
  | { action: 'delete'; reason: 'unknown' };

/** The stored row's lookup key of a parsed subject (one string per object and cluster). */
export function desiredKey(key: ParsedObjectSubject): string {
  return desiredSubject(key.cluster, key);
}

function sameObject(msg: DesiredMessage, key: ParsedObjectSubject): boolean {
  return (
    msg.cluster === key.cluster && msg.kind === key.kind && msg.namespace === key.namespace && msg.name === key.name
  );
}

function sameContent(msg: DesiredMessage, stored: StoredDesired): boolean {
  if (msg.deleted !== stored.deleted || msg.workloadId !== stored.workloadId || msg.revision !== stored.revision) {
    return false;
  }
  if (stored.deleted) return msg.manifest === undefined && stored.manifestHash === TOMBSTONE_HASH;
  return msg.manifest !== undefined && contentHash(msg.manifest) === stored.manifestHash;
}

/**
 * `stored` looks rows up by desiredKey(). A valid message of an older generation is kept: the
 * hub committed a newer one that its relay has not published yet (the relay publishes it next).
 */
export function checkDesired(
  subject: string,
  data: Uint8Array,
  stored: (key: string) => StoredDesired | undefined,
): DesiredVerdict {
  const key = parseDesiredSubject(subject);
  const row = key ? stored(desiredKey(key)) : undefined;
  if (!key || !row) return { action: 'delete', reason: 'unknown' };
  const decoded = decodeDesired(data);
  if (!decoded.ok) return { action: 'republish', reason: 'invalid', key };
  const msg = decoded.value;
  if (!sameObject(msg, key)) return { action: 'republish', reason: 'mismatch', key };
  if (msg.generation < row.generation) return { action: 'keep' };
  if (msg.generation > row.generation || !sameContent(msg, row))
    return { action: 'republish', reason: 'mismatch', key };
  return { action: 'keep' };
}
