const OFFSET_BASIS_32 = 0x811c9dc5;
const PRIME_32 = 0x01000193;

/**
 * FNV-1 32-bit (Go's hash/fnv New32): for each byte, multiply by the prime, then xor. Kubernetes
 * revision hashes use FNV-1, not FNV-1a (xor first), so the order matters. The chunks are hashed
 * as one stream, which is how the collision count is appended to the revision data.
 */
export function fnv1Hash32(...chunks: readonly Uint8Array[]): number {
  let hash = OFFSET_BASIS_32;
  for (const chunk of chunks) {
    for (const byte of chunk) {
      hash = Math.imul(hash, PRIME_32) ^ byte;
    }
  }
  return hash >>> 0;
}
