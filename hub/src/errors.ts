/**
 * Every error the hub returns carries a stable code and an HTTP status. Routes and services
 * throw HubError; the one error handler in app.ts turns it into `{ error: { code, message } }`.
 */
import type { FieldProblem } from '@flotilla/api';

export type HubErrorCode =
  | 'HUB_ERR_UNAUTHORIZED'
  | 'HUB_ERR_FORBIDDEN'
  | 'HUB_ERR_POLICY_DENIED'
  | 'HUB_ERR_REGISTRATION_REFUSED'
  | 'HUB_ERR_TOO_MANY_REQUESTS'
  | 'HUB_ERR_NOT_FOUND'
  | 'HUB_ERR_INVALID'
  | 'HUB_ERR_CONFLICT'
  | 'HUB_ERR_PAYLOAD_TOO_LARGE'
  | 'HUB_ERR_CLUSTER_NOT_ACCEPTED'
  | 'HUB_ERR_CREDENTIALS_CLAIMED'
  | 'HUB_ERR_UNAVAILABLE'
  | 'HUB_ERR_CONFIG'
  | 'HUB_ERR_MIGRATION'
  | 'HUB_ERR_INTERNAL';

const STATUS: Record<HubErrorCode, number> = {
  HUB_ERR_UNAUTHORIZED: 401,
  HUB_ERR_FORBIDDEN: 403,
  HUB_ERR_POLICY_DENIED: 403,
  HUB_ERR_REGISTRATION_REFUSED: 403,
  HUB_ERR_TOO_MANY_REQUESTS: 429,
  HUB_ERR_NOT_FOUND: 404,
  HUB_ERR_INVALID: 400,
  HUB_ERR_CONFLICT: 409,
  HUB_ERR_PAYLOAD_TOO_LARGE: 413,
  HUB_ERR_CLUSTER_NOT_ACCEPTED: 409,
  HUB_ERR_CREDENTIALS_CLAIMED: 409,
  HUB_ERR_UNAVAILABLE: 503,
  HUB_ERR_CONFIG: 500,
  HUB_ERR_MIGRATION: 500,
  HUB_ERR_INTERNAL: 500,
};

export interface HubErrorOptions extends ErrorOptions {
  details?: FieldProblem[];
  /** Sent as Retry-After (429s). */
  retryAfterSeconds?: number;
}

export class HubError extends Error {
  readonly code: HubErrorCode;
  readonly statusCode: number;
  readonly details: FieldProblem[] | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: HubErrorCode, message: string, options: HubErrorOptions = {}) {
    super(message, options);
    this.name = 'HubError';
    this.code = code;
    this.statusCode = STATUS[code];
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export const notFound = (what: string): HubError => new HubError('HUB_ERR_NOT_FOUND', `${what} not found`);
export const conflict = (message: string): HubError => new HubError('HUB_ERR_CONFLICT', message);
/** A limit refused the request; the client may retry after `retryAfterSeconds`. */
export const tooManyRequests = (message: string, retryAfterSeconds: number): HubError =>
  new HubError('HUB_ERR_TOO_MANY_REQUESTS', message, { retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)) });
export const invalid = (message: string, details: FieldProblem[] = []): HubError =>
  new HubError('HUB_ERR_INVALID', message, { details });

/**
 * The SQLSTATE of a Postgres error, found through drizzle's wrapping (DrizzleQueryError keeps
 * the pg error as its cause).
 */
function pgCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A unique constraint refused the write (repositories turn it into a 409 naming the object). */
export function isUniqueViolation(err: unknown): boolean {
  return pgCode(err) === '23505';
}
