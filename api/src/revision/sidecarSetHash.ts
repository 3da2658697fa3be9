import { createHash } from 'node:crypto';
import { safeEncodeString } from './safeEncode.js';
import { kruise19Structs } from './goStructs.kruise19.js';
import { encodeGoTyped } from './typedJson.js';

/** The parts of a SidecarSet its hashes depend on; the full SidecarSet type fits. */
export interface SidecarSetHashSource {
  spec?: {
    containers?: readonly unknown[] | null;
    initContainers?: readonly unknown[] | null;
  } | null;
}

/**
 * `kruise.io/sidecarset-hash`: SafeEncodeString of the hex SHA-256 of Go's JSON of
 * `{"containers":[...]}`, plus `"initContainers":[...]` (all of them) when at least one init
 * container is a native sidecar (restartPolicy Always). The containers are typed
 * SidecarContainers, so field order is Go's declaration order, not sorted. Pass the spec after
 * defaulting: OpenKruise's webhook defaults before hashing.
 */
export function sidecarSetHash(sidecarSet: SidecarSetHashSource): string {
  return hashSidecars(sidecarSet.spec?.containers, sidecarSet.spec?.initContainers);
}

/**
 * `kruise.io/sidecarset-hash-without-image`: the same with every image blanked, init containers
 * included. Pods whose annotation matches it can be upgraded by changing images only.
 */
export function sidecarSetHashWithoutImage(sidecarSet: SidecarSetHashSource): string {
  return hashSidecars(withoutImages(sidecarSet.spec?.containers), withoutImages(sidecarSet.spec?.initContainers));
}

/** The exact document hashed (exported for tests and diagnostics). */
export function sidecarSetHashDocument(
  containers: readonly unknown[] | null | undefined,
  initContainers: readonly unknown[] | null | undefined,
): string {
  const encodedContainers = encodeGoTyped('[]kruise.SidecarContainer', containers, kruise19Structs);
  const encodedInit = encodeGoTyped('[]kruise.SidecarContainer', initContainers, kruise19Structs);
  const nativeSidecar = (initContainers ?? []).some(
    (c) => typeof c === 'object' && c !== null && (c as { restartPolicy?: unknown }).restartPolicy === 'Always',
  );
  return nativeSidecar
    ? `{"containers":${encodedContainers},"initContainers":${encodedInit}}`
    : `{"containers":${encodedContainers}}`;
}

function hashSidecars(
  containers: readonly unknown[] | null | undefined,
  initContainers: readonly unknown[] | null | undefined,
): string {
  const document = sidecarSetHashDocument(containers, initContainers);
  return safeEncodeString(createHash('sha256').update(document, 'utf8').digest('hex'));
}

function withoutImages(containers: readonly unknown[] | null | undefined): readonly unknown[] | null | undefined {
  return containers?.map((c) => (typeof c === 'object' && c !== null && !Array.isArray(c) ? { ...c, image: '' } : c));
}
