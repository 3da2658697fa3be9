/**
 * Opaque continue tokens: the sort key of the last item, base64url-encoded JSON. A token comes
 * back from the client, so decoding checks every part against the kind of key the list sorts
 * by (and the column type behind it) before anything reaches SQL.
 */
import { DEFAULT_PAGE_SIZE } from '@flotilla/api';
import { invalid } from '../errors.js';

/**
 * The kinds of key parts lists sort by: `string` (names, kinds; text columns), `int32` (revision
 * numbers; integer columns, 0..2^31-1), `id` (bigserial ids, 0..2^53-1), `timestamp` (an ISO
 * time in UTC as toISOString writes it) and `uuid`.
 */
export type KeyPart = 'string' | 'int32' | 'id' | 'timestamp' | 'uuid';
type KeyValue<K extends KeyPart> = K extends 'int32' | 'id' ? number : string;
export type DecodedKey<K extends readonly KeyPart[]> = { -readonly [I in keyof K]: KeyValue<K[I]> };

const MAX_STRING_PART = 512;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function partValid(kind: KeyPart, v: unknown): boolean {
  switch (kind) {
    case 'string':
      // Postgres text cannot hold NUL.
      return typeof v === 'string' && v.length <= MAX_STRING_PART && !v.includes('\u0000');
    case 'int32':
      return Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 2 ** 31 - 1;
    case 'id':
      return Number.isSafeInteger(v) && (v as number) >= 0;
    case 'timestamp':
      return typeof v === 'string' && ISO_UTC.test(v) && Number.isFinite(Date.parse(v));
    case 'uuid':
      return typeof v === 'string' && UUID.test(v);
  }
}

export function encodeContinue(key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** Decodes a token into key parts of the given kinds; anything else is a 400 on `continue`. */
export function decodeContinue<const K extends readonly KeyPart[]>(
  token: string | undefined,
  kinds: K,
): DecodedKey<K> | undefined {
  if (token === undefined || token === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (Array.isArray(parsed) && parsed.length === kinds.length && kinds.every((k, i) => partValid(k, parsed[i]))) {
    return parsed as DecodedKey<K>;
  }
  throw invalid('invalid continue token', [{ path: 'continue', message: 'is not a token this API issued' }]);
}

export function pageSize(limit: number | undefined): number {
  return limit ?? DEFAULT_PAGE_SIZE;
}

/**
 * Given `limit + 1` fetched rows, returns the page and the token for the next one (if any).
 */
export function toPage<T>(
  rows: T[],
  limit: number,
  keyOf: (row: T) => (string | number)[],
): { items: T[]; continue?: string } {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, continue: encodeContinue(keyOf(items[items.length - 1]!)) };
}

/**
 * One page of a list sorted by a key: decodes where to continue (a 400 on `continue` first),
 * fetches `limit + 1` rows after it (`fetch` adds the one), and returns the page in the API's
 * shape with the token for the next one.
 */
export async function paginate<const K extends readonly KeyPart[], R, T>(
  query: { limit?: number; continue?: string },
  kinds: K,
  fetch: (after: DecodedKey<K> | undefined, limit: number) => Promise<R[]>,
  keyOf: (row: R) => (string | number)[],
  view: (row: R) => T,
): Promise<{ items: T[]; continue?: string }> {
  const limit = pageSize(query.limit);
  const after = decodeContinue(query.continue, kinds);
  const page = toPage(await fetch(after, limit), limit, keyOf);
  return { ...page, items: page.items.map(view) };
}
