// Go strings are UTF-8 bytes; JS strings are UTF-16 code units. These helpers bridge the two the
// way Go's JSON decoder would have seen the same JSON text.

const REPLACEMENT = '\uFFFD';

/**
 * Replaces every lone surrogate with U+FFFD. Go's JSON decoder turns an unpaired `\ud800`
 * escape into U+FFFD, so this is the Go string that a JSON text holding this JS string decodes to.
 */
export function toGoString(s: string): string {
  let out = '';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const unit = s.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = s.charCodeAt(i + 1);
    if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      i++; // a well-formed pair
      continue;
    }
    out += s.slice(start, i) + REPLACEMENT;
    start = i + 1;
  }
  return start === 0 ? s : out + s.slice(start);
}

/**
 * Orders strings as Go's `strings.Compare` orders their UTF-8 bytes. Byte order of UTF-8 equals
 * code point order, which differs from JS's default UTF-16 order once characters above U+FFFF
 * (surrogate pairs) meet characters in U+E000..U+FFFF. Both inputs must be well-formed.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (U+D800..U+DFFF units) stand for code points above U+FFFF: they sort last.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

const encoder = new TextEncoder();

/** UTF-8 bytes of s; lone surrogates become U+FFFD, as in Go. */
export function utf8Bytes(s: string): Uint8Array {
  return encoder.encode(s);
}
