import { toGoString, utf8Bytes } from './utf8.js';

/** The alphabet of k8s.io/apimachinery/pkg/util/rand: no vowels, so hashes spell no words. */
export const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * Maps each code point of s to SAFE_ALPHABET[codePoint % 27], as rand.SafeEncodeString does.
 * Go sizes its output by UTF-8 bytes but fills one byte per code point, so a multi-byte input
 * leaves trailing NUL bytes; they are reproduced here. Hash inputs (decimal or hex digits) are
 * ASCII and never hit that quirk.
 */
export function safeEncodeString(s: string): string {
  const codePoints = Array.from(toGoString(s), (ch) => ch.codePointAt(0) ?? 0);
  const encoded = codePoints.map((cp) => SAFE_ALPHABET[cp % SAFE_ALPHABET.length]).join('');
  return encoded + '\0'.repeat(utf8Bytes(s).length - codePoints.length);
}
