/**
 * The CLI's one HTTP client: JSON requests to the hub's /api/v1 with the bearer token, error
 * bodies turned into ApiError, and the raw response for server-sent event streams. `fetch` is
 * injected so commands can be driven against a real hub (integration tests) or a recorded one.
 */
import type { FieldProblem } from '@flotilla/api';
import { ApiError, CliError } from './errors.js';

export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;
export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
}

export interface HubClient {
  /** The hub's base URL (never includes the token). */
  readonly baseUrl: string;
  request<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, opts?: RequestOptions): Promise<T>;
  /** GET of a text/event-stream; the caller reads `body`. */
  stream(path: string, opts?: { lastEventId?: string; signal?: AbortSignal }): Promise<Response>;
}

export interface ClientOptions {
  baseUrl: string;
  token: string | undefined;
  fetch: Fetch;
}

const API_PREFIX = '/api/v1';

/** `/clusters` + `{ limit: 5 }` → `https://hub/api/v1/clusters?limit=5`; undefined values are left out. */
export function apiUrl(baseUrl: string, path: string, query: Query = {}): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}${API_PREFIX}${path}`);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  return url.toString();
}

/** Segment of a path built from user input (a name with `/` or `?` must not change the route). */
export const seg = (s: string): string => encodeURIComponent(s);

async function errorFrom(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const e = body.error;
    if (e && typeof e.code === 'string' && typeof e.message === 'string') {
      return new ApiError(res.status, e.code, e.message, Array.isArray(e.details) ? (e.details as FieldProblem[]) : []);
    }
  } catch {
    // not JSON: fall through to the status line
  }
  return new ApiError(res.status, 'HTTP_ERROR', res.statusText || text.slice(0, 200) || 'request failed');
}

/** The request headers: `extra` and, when there is a token, its Authorization header. */
function headersWith(token: string | undefined, extra: Record<string, string>): Record<string, string> {
  return { ...extra, ...(token ? { authorization: `Bearer ${token}` } : {}) };
}

/** fetch, with a network failure turned into an error naming the hub (never the token). */
async function send(opts: ClientOptions, url: string, init: RequestInit): Promise<Response> {
  try {
    return await opts.fetch(url, init);
  } catch (cause) {
    const reason = (cause as { cause?: { code?: string } }).cause?.code ?? (cause as Error).message;
    throw new CliError('CLI_ERR_CONNECT', `cannot reach the hub at ${opts.baseUrl}: ${reason}`, { cause });
  }
}

/** A successful response's JSON body (undefined for 204 or an empty body). */
async function jsonBody<T>(res: Response, what: string): Promise<T> {
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  try {
    return (text === '' ? undefined : JSON.parse(text)) as T;
  } catch (cause) {
    throw new CliError('CLI_ERR_RESPONSE', `${what}: the hub answered with invalid JSON`, { cause });
  }
}

export function createHubClient(opts: ClientOptions): HubClient {
  return {
    baseUrl: opts.baseUrl,
    async request<T>(method: string, path: string, ro: RequestOptions = {}): Promise<T> {
      const hasBody = ro.body !== undefined;
      const res = await send(opts, apiUrl(opts.baseUrl, path, ro.query), {
        method,
        headers: headersWith(opts.token, {
          accept: 'application/json',
          ...(hasBody ? { 'content-type': 'application/json' } : {}),
        }),
        ...(hasBody ? { body: JSON.stringify(ro.body) } : {}),
      });
      if (!res.ok) throw await errorFrom(res);
      return jsonBody<T>(res, `${method} ${path}`);
    },
    async stream(path, so = {}): Promise<Response> {
      const res = await send(opts, apiUrl(opts.baseUrl, path), {
        headers: headersWith(opts.token, {
          accept: 'text/event-stream',
          ...(so.lastEventId ? { 'last-event-id': so.lastEventId } : {}),
        }),
        ...(so.signal ? { signal: so.signal } : {}),
      });
      if (!res.ok) throw await errorFrom(res);
      return res;
    },
  };
}

/** Every item of a paged list (`{ items, continue }`), following `continue` tokens. */
export async function listAll<T>(client: HubClient, path: string, query: Query = {}): Promise<T[]> {
  const items: T[] = [];
  let cont: string | undefined;
  do {
    const page = await client.request<{ items: T[]; continue?: string }>('GET', path, {
      query: { ...query, limit: 1000, continue: cont },
    });
    items.push(...page.items);
    cont = page.continue;
  } while (cont);
  return items;
}
