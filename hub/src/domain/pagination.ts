/** Opaque continue tokens: the sort key of the last item, base64url-encoded JSON. */
import { DEFAULT_PAGE_SIZE } from '@flotilla/api';
import { invalid } from '../errors.js';

export function encodeContinue(key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** Decodes a token into `length` key parts; a malformed token is a 400 on `continue`. */
export function decodeContinue(token: string | undefined, length: number): (string | number)[] | undefined {
  if (token === undefined || token === '') return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (
      Array.isArray(parsed) &&
      parsed.length === length &&
      parsed.every((p) => typeof p === 'string' || typeof p === 'number')
    ) {
      return parsed;
    }
  } catch {
    // fall through to the error below
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
