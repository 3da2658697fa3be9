/**
 * The one error handler: every failure becomes `{ error: { code, message, details? } }`.
 * Schema violations are 400s with field paths, oversized bodies 413, unknown routes 404;
 * 5xx messages are logged but never shown (they may carry internals).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorResponse, FieldProblem } from '@flotilla/api';
import { HubError, type HubErrorCode } from '../errors.js';

interface AjvIssue {
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** `/spec/template/0` → `spec.template[0]`; missing/extra properties name the property itself. */
export function fieldPath(issue: AjvIssue, context: string | undefined): string {
  const parts = issue.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  const extra = issue.params?.['missingProperty'] ?? issue.params?.['additionalProperty'];
  if (typeof extra === 'string') parts.push(extra);
  let path = '';
  for (const p of parts) path += /^\d+$/.test(p) ? `[${p}]` : path === '' ? p : `.${p}`;
  return context && context !== 'body' ? (path === '' ? context : `${context}.${path}`) : path;
}

function send(
  reply: FastifyReply,
  status: number,
  code: HubErrorCode,
  message: string,
  details?: FieldProblem[],
): void {
  const body: ErrorResponse = { error: { code, message, ...(details && details.length > 0 ? { details } : {}) } };
  void reply.status(status).send(body);
}

function codeForStatus(status: number): HubErrorCode {
  if (status === 401) return 'HUB_ERR_UNAUTHORIZED';
  if (status === 403) return 'HUB_ERR_FORBIDDEN';
  if (status === 404) return 'HUB_ERR_NOT_FOUND';
  if (status === 409) return 'HUB_ERR_CONFLICT';
  if (status === 429) return 'HUB_ERR_TOO_MANY_REQUESTS';
  if (status === 413) return 'HUB_ERR_PAYLOAD_TOO_LARGE';
  return status >= 500 ? 'HUB_ERR_INTERNAL' : 'HUB_ERR_INVALID';
}

/** pg-pool's message when no connection came free within its connectionTimeoutMillis. */
const POOL_TIMEOUT = 'timeout exceeded when trying to connect';

/**
 * True when the error (or one it wraps: drizzle wraps the driver's) is the database pool having
 * no connection to hand out in time: the hub is busy, not broken, and the request can be retried.
 */
export function isDatabaseBusy(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.message.includes(POOL_TIMEOUT)) return true;
  }
  return false;
}

/** Retry-After of a request refused because the database pool was exhausted. */
const BUSY_RETRY_AFTER_SECONDS = 1;

export function handleError(err: FastifyError | HubError, request: FastifyRequest, reply: FastifyReply): void {
  if (isDatabaseBusy(err)) {
    request.log.warn({ err: err.message }, 'database pool exhausted; refused with 503');
    void reply.header('retry-after', String(BUSY_RETRY_AFTER_SECONDS));
    return send(reply, 503, 'HUB_ERR_UNAVAILABLE', 'the hub is busy; retry shortly');
  }
  if (err instanceof HubError) {
    if (err.statusCode >= 500) request.log.error({ err }, 'request failed');
    if (err.retryAfterSeconds !== undefined) void reply.header('retry-after', String(err.retryAfterSeconds));
    return send(reply, err.statusCode, err.code, err.statusCode >= 500 ? 'internal error' : err.message, err.details);
  }
  if (err.validation) {
    const details = err.validation.map((v) => ({
      path: fieldPath(v as AjvIssue, err.validationContext),
      message: v.message ?? 'is invalid',
    }));
    return send(reply, 400, 'HUB_ERR_INVALID', 'the request is invalid', details);
  }
  const status = err.statusCode && err.statusCode >= 400 ? err.statusCode : 500;
  if (status >= 500) {
    request.log.error({ err }, 'request failed');
    return send(reply, status, 'HUB_ERR_INTERNAL', 'internal error');
  }
  const code = codeForStatus(status);
  return send(reply, status, code, status === 413 ? 'the request body is too large' : err.message);
}

/**
 * Errors fastify's router answers before any route or hook runs (`frameworkErrors` in the
 * Fastify options): a path segment that is not valid percent-encoding, a path parameter longer
 * than maxParamLength. Same envelope as every other error, and a message that never echoes the
 * URL (its query string may hold a token).
 */
export function handleFrameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (err.code === 'FST_ERR_BAD_URL') {
    return send(reply, 400, 'HUB_ERR_INVALID', 'the URL is not valid', [
      { path: 'url', message: 'a path segment is not valid percent-encoding' },
    ]);
  }
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return send(reply, 414, 'HUB_ERR_INVALID', 'the URL is not valid', [
      { path: 'url', message: 'a path parameter is longer than the hub accepts' },
    ]);
  }
  return handleError(err, request, reply);
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) =>
    send(reply, 404, 'HUB_ERR_NOT_FOUND', `route ${request.method} ${request.url.split('?')[0]} not found`),
  );
}
