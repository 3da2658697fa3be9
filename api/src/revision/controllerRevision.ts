import { fnv1Hash32 } from './fnv1.js';
import { safeEncodeString } from './safeEncode.js';
import { utf8Bytes } from './utf8.js';

/** Longest prefix k8s keeps so that prefix + "-" + hash stays within 253 bytes. */
export const REVISION_NAME_PREFIX_MAX = 223;

/**
 * The ControllerRevision hash of k8s pkg/controller/history (HashControllerRevision), which
 * OpenKruise uses for CloneSet and SidecarSet revisions: FNV-1 32 over the revision data bytes,
 * then, when a collision count is given, over its decimal text; the decimal sum is then mapped
 * through safeEncodeString. A collision count of 0 differs from none: "0" is still hashed.
 */
export function controllerRevisionHash(data: string | Uint8Array, collisionCount?: number | null): string {
  const chunks = [typeof data === 'string' ? utf8Bytes(data) : data];
  if (collisionCount !== undefined && collisionCount !== null) {
    if (!Number.isInteger(collisionCount) || collisionCount < -(2 ** 31) || collisionCount >= 2 ** 31) {
      throw new RangeError(`collisionCount must be an int32, got ${collisionCount}`);
    }
    chunks.push(utf8Bytes(String(collisionCount)));
  }
  return safeEncodeString(String(fnv1Hash32(...chunks)));
}

/**
 * `<prefix>-<hash>`, the prefix cut to 223 bytes as history.ControllerRevisionName does.
 * Object names are ASCII, where bytes and characters agree.
 */
export function controllerRevisionName(prefix: string, hash: string): string {
  const bytes = utf8Bytes(prefix);
  const kept = bytes.length > REVISION_NAME_PREFIX_MAX ? new TextDecoder().decode(bytes.subarray(0, 223)) : prefix;
  return `${kept}-${hash}`;
}
