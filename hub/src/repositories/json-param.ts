/**
 * Large text columns (manifests, payloads) travel as one JSON array, unpacked by
 * `json_array_elements_text`: node-postgres escapes a text[] parameter element by element in
 * JavaScript (measured ~16 ms of CPU per 700 KB, often far more with the garbage it leaves),
 * where JSON.stringify takes ~1 ms and Postgres parses JSON faster than an array literal.
 */
import { sql, type SQLWrapper } from 'drizzle-orm';

export function jsonTexts(values: readonly (string | null)[]): SQLWrapper {
  return sql.param(JSON.stringify(values));
}
