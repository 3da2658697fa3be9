import { toGoString } from './utf8.js';

const HEX = '0123456789abcdef';

/**
 * Quotes s as Go's encoding/json does with HTML escaping on (json.Marshal's default):
 * `"` and `\` backslashed; \b \f \n \r \t short; other bytes below 0x20 as \u00XX (lowercase);
 * <, >, & as \u003c \u003e \u0026; U+2028 and U+2029 escaped; everything else raw, DEL included.
 * Lone surrogates come out as a raw U+FFFD (see toGoString). Go before 1.22 wrote \b and \f as
 * \u0008 and \u000c; OpenKruise v1.8 builds with a newer Go, and the vectors pin the result.
 */
export function quoteGoString(input: string): string {
  const s = toGoString(input);
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const escaped = escapeUnit(c);
    if (escaped === undefined) continue;
    out += s.slice(start, i) + escaped;
    start = i + 1;
  }
  return out + s.slice(start) + '"';
}

/** The code units Go writes with a short escape. */
const SHORT_ESCAPES: ReadonlyMap<number, string> = new Map([
  [0x22, '\\"'],
  [0x5c, '\\\\'],
  [0x08, '\\b'],
  [0x0c, '\\f'],
  [0x0a, '\\n'],
  [0x0d, '\\r'],
  [0x09, '\\t'],
]);

/** <, > and &, escaped as \u00XX for HTML safety. */
const HTML_UNITS: ReadonlySet<number> = new Set([0x3c, 0x3e, 0x26]);

function escapeUnit(c: number): string | undefined {
  if (c < 0x20 || c === 0x22 || c === 0x5c || HTML_UNITS.has(c)) {
    return SHORT_ESCAPES.get(c) ?? `\\u00${HEX[c >> 4]}${HEX[c & 0xf]}`;
  }
  return c === 0x2028 || c === 0x2029 ? `\\u${c.toString(16)}` : undefined;
}
