/**
 * The properties every answer of the hub must have, whatever the request:
 * - never a 5xx;
 * - every 4xx is `{ error: { code: HUB_ERR_*, message, details? } }`, details being
 *   `{ path, message }` pairs, and a 400 for an invalid request names at least one field;
 * - a caller without a valid token gets 401 on every API route (authentication comes before the
 *   body is read, so an anonymous caller learns nothing about the request's shape);
 * - no answer contains an API token or the hub's NATS password;
 * - a 2xx with a JSON content type parses as JSON.
 */
import type { Violation } from '../lib/findings.js';
import type { LogLine } from '../lib/hub.js';
import type { FuzzRequest } from './requests.js';

export interface Answer {
  status: number;
  contentType: string;
  body: string;
}

const ANONYMOUS = new Set(['none', 'empty-bearer', 'basic', 'two-words', 'unknown', 'revoked', 'query-token']);
const CODE = /^HUB_ERR_[A-Z_]+$/;

/** The 4xx error envelope's problems, or '' when it is well-formed. */
export function errorShapeProblem(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return 'not JSON';
  }
  const error = (parsed as { error?: unknown } | null)?.error as Record<string, unknown> | undefined;
  if (typeof error !== 'object' || error === null) return 'no error object';
  if (typeof error['code'] !== 'string' || !CODE.test(error['code'])) return `code ${JSON.stringify(error['code'])}`;
  if (typeof error['message'] !== 'string' || error['message'] === '') return 'no message';
  const details = error['details'];
  if (details === undefined) return '';
  if (!Array.isArray(details) || details.length === 0) return 'details not a non-empty array';
  const bad = details.find(
    (d) => typeof d !== 'object' || d === null || typeof d.path !== 'string' || typeof d.message !== 'string',
  );
  return bad === undefined ? '' : `detail ${JSON.stringify(bad)}`;
}

/** The router's own answers (no route, a URL it cannot read) come before any route's authentication. */
function isRouterAnswer(a: Answer): boolean {
  if (a.status === 404) return a.body.includes('"HUB_ERR_NOT_FOUND"') && a.body.includes('"route ');
  return (a.status === 400 || a.status === 414) && a.body.includes('"the URL is not valid"');
}

/** Checks one answer; `errors` are the hub's error log lines written while it was made. */
export function checkAnswer(
  req: FuzzRequest,
  a: Answer,
  ctx: { secrets: readonly string[]; errors: readonly LogLine[]; rerouted: boolean },
): Violation[] {
  const method = req.method ?? req.route.method;
  const where = `${method} ${req.route.path}`;
  const out: Violation[] = [];
  if (a.status >= 500 || a.status < 100) {
    const logs = ctx.errors.map((l) => `${l.msg ?? ''} ${l.err?.stack ?? l.err?.message ?? ''}`).join('\n');
    out.push({ kind: '5xx', where, detail: `${a.status} ${a.body.slice(0, 500)}\n${logs}` });
  } else if (a.status >= 400 && method !== 'HEAD') {
    const problem = errorShapeProblem(a.body);
    if (problem !== '')
      out.push({ kind: 'error-shape', where, detail: `${a.status} ${problem}: ${a.body.slice(0, 300)}` });
    // A JSON body the hub refuses as invalid has a field at fault: the answer must name it.
    else if (
      a.status === 400 &&
      req.body.kind === 'json' &&
      a.body.includes('"HUB_ERR_INVALID"') &&
      !a.body.includes('"details"')
    ) {
      out.push({ kind: 'no-field', where, detail: a.body.slice(0, 300) });
    }
  } else if (a.status >= 200 && a.status < 300 && a.contentType.includes('json') && a.body !== '') {
    try {
      JSON.parse(a.body);
    } catch {
      out.push({ kind: 'bad-2xx', where, detail: a.body.slice(0, 300) });
    }
  }
  const ownRoute =
    req.method === undefined &&
    !ctx.rerouted &&
    req.route.path.startsWith('/api/v1/') &&
    req.route.path !== '/api/v1/openapi.json';
  // Routes authenticated otherwise than by a bearer token (the agent's signature) refuse a bad
  // signature with 403 whatever token comes along.
  const bearerRoute = req.route.security?.includes('bearer') ?? true;
  const refusedAnswer = a.status === 401 || (!bearerRoute && a.status === 403);
  if (ANONYMOUS.has(req.auth) && ownRoute && !refusedAnswer && a.status !== 429 && !isRouterAnswer(a)) {
    out.push({ kind: 'auth-order', where, detail: `${req.auth} caller got ${a.status}: ${a.body.slice(0, 200)}` });
  }
  const leaked = ctx.secrets.find((s) => a.body.includes(s));
  if (leaked !== undefined) out.push({ kind: 'secret-leak', where, detail: `answer ${a.status} contains a secret` });
  return out;
}
