import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { KubeCredentials } from './kubeconfig/index.js';
import { AgentError, KubeApiError } from '../errors.js';
import { H2NotOffered, H2Pool, H2Refused, H2SessionLost } from './h2.js';
import { kubeOptionsApplier, TLS_KEYS } from './kube-options.js';

/** Content types of the PATCH flavours. */
export const PatchType = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

export interface KubeRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the server URL, e.g. from resourcePath(). */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** Sent as JSON (also valid YAML for server-side apply). */
  body?: unknown;
  /** Defaults to application/json; use PatchType for PATCH. */
  contentType?: string;
  signal?: AbortSignal;
  /**
   * The caller does not read a 2xx answer: request() resolves undefined without keeping or
   * parsing its body (a created pod's answer is the whole pod, and parsing it was a few per cent
   * of the agent's CPU in a scale-up; test/bench/cloneset). Error answers are still parsed into
   * the KubeApiError.
   */
  discardBody?: boolean;
}

/**
 * Raw JSON access to the apiserver. The typed clients of @kubernetes/client-node turn timestamps
 * into Date objects, drop fields they don't know and serialize MicroTime with milliseconds (which
 * the apiserver rejects); the runtime reads and writes objects exactly as they are on the wire.
 */
export interface KubeRest {
  /**
   * Resolves the parsed JSON body of a 2xx answer (undefined with `discardBody`); rejects with
   * KubeApiError (HTTP status) or AgentError.
   */
  request<T = unknown>(req: KubeRequest): Promise<T>;
}

/** An open streaming response (a watch): its body is being handed over chunk by chunk. */
export interface KubeStream {
  /** Resolves when the body ended cleanly or after abort(); rejects on a transport error. */
  readonly done: Promise<void>;
  /** Closes the stream; `done` then resolves. */
  abort(): void;
}

/** The client createKubeRest returns: a KubeRest whose idle connections can be closed. */
export interface KubeRestClient extends KubeRest {
  /**
   * Opens a long-lived GET (a watch) on a connection of its own and hands every chunk of the body
   * to `onChunk` as it arrives. Resolves once a 2xx answer started; rejects like request() for
   * any other answer. A throw from `onChunk` ends the stream and rejects `done` with it.
   */
  stream(req: KubeRequest, onChunk: (chunk: Buffer) => void): Promise<KubeStream>;
  /** Closes every kept-alive connection; requests after it open new ones. */
  close(): void;
}

export interface KubeRestOptions {
  /** Per-request timeout; default 30 s. */
  timeoutMs?: number;
  /**
   * request() goes over HTTP/2 when the server offers it (https, no proxy-url): one TLS session
   * carries every request in flight, as client-go does, so a burst needs no new connections.
   * Default true; false (or a server without h2) keeps HTTP/1.1 keep-alive connections.
   * Streams (watches) always use HTTP/1.1 connections of their own.
   */
  http2?: boolean;
  /**
   * Most HTTP/1.1 connections open to the apiserver at once; further requests wait for a free
   * one. Default 128: the CloneSet controller's 64 concurrent creates plus status, event and
   * other controllers' writes. Watches do not count: they use connections of their own.
   */
  maxSockets?: number;
  /** Most idle HTTP/1.1 connections kept open for reuse; default 64. */
  maxFreeSockets?: number;
  /**
   * An idle connection (or HTTP/2 session) is closed after this long; default 30 s, well below
   * the apiserver's 90 s idle timeout, so we never reuse a connection the server is closing at
   * that moment. An HTTP/2 session silent this long with requests in flight is PINGed.
   */
  idleTimeoutMs?: number;
  /** An HTTP/2 session that does not answer a PING within this long is closed; default 15 s. */
  pingTimeoutMs?: number;
  /**
   * The kubeconfig's TLS files (CA, client certificate and key) are read again after this long,
   * and connections rebuilt when they changed; default 10 s. Credentials in headers (tokens,
   * exec plugins) are applied on every request. 0 reads everything on every request.
   */
  tlsRefreshMs?: number;
}

const DEFAULTS = {
  timeoutMs: 30_000,
  http2: true,
  maxSockets: 128,
  maxFreeSockets: 64,
  idleTimeoutMs: 30_000,
  pingTimeoutMs: 15_000,
  tlsRefreshMs: 10_000,
};
/** HTTP/2 sessions open at once; one carries 100 or more streams (the apiserver's limit). */
const MAX_H2_SESSIONS = 8;
/**
 * Streams (watches) get their own Agents: one connection each for as long as they last, never
 * taking a socket the writes need; kept alive so the next watch after a server-side timeout
 * reuses the connection instead of paying another TLS handshake.
 */
const STREAM_POOL = { maxSockets: Infinity, maxFreeSockets: 16, http2: false };

/** RFC 9110 idempotent methods: safe to send again when a reused connection turned out to be closed. */
const IDEMPOTENT = new Set<KubeRequest['method']>(['GET', 'PUT', 'DELETE']);

/** The TLS material connections are bound to. */
type Tls = Pick<
  https.RequestOptions,
  'ca' | 'cert' | 'key' | 'pfx' | 'passphrase' | 'rejectUnauthorized' | 'servername'
>;

/** TLS material is re-read from its files now and then, so it is compared by content. */
function same(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  return a === b;
}

function tlsContext(t: Tls): tls.SecureContext {
  const { ca, cert, key, pfx, passphrase } = t;
  return tls.createSecureContext({ ca, cert, key, pfx, passphrase });
}

/**
 * Kept-alive connections of one client. @kubernetes/client-node's applyToHTTPSOptions puts a
 * new Agent on every request, so each request would pay a TLS handshake on both sides, which
 * cuts the pod-create rate an apiserver sustains to about a third (test/bench/cloneset). The
 * https Agent and the HTTP/2 sessions are rebuilt when the TLS material changes (rotated client
 * certificates; in-flight requests finish on the old ones); credentials in headers are applied
 * per request anyway (token files rotate).
 */
/** The connections bound to one set of TLS material. */
interface Bound {
  tls: Tls;
  secureContext: tls.SecureContext;
  agent?: https.Agent;
  h2?: H2Pool;
}

class Connections {
  readonly #o: typeof DEFAULTS;
  #tls: Bound | undefined;
  #http: http.Agent | undefined;

  constructor(options: typeof DEFAULTS) {
    this.#o = options;
  }

  /** The Agent for an HTTP/1.1 request to `url` with `opts` as applyToHTTPSOptions filled them. */
  agentFor(url: URL, opts: https.RequestOptions): http.Agent {
    const kept = { keepAlive: true, maxSockets: this.#o.maxSockets, maxFreeSockets: this.#o.maxFreeSockets };
    // Idle sockets time out after this; a request in flight has its own timeout (request.setTimeout).
    const timeout = this.#o.idleTimeoutMs;
    if (url.protocol === 'http:') return (this.#http ??= new http.Agent({ ...kept, timeout }));
    const t = this.#bound(opts);
    return (t.agent ??= new https.Agent({ ...t.tls, secureContext: t.secureContext, ...kept, timeout }));
  }

  /** The HTTP/2 sessions for an https request, or undefined when HTTP/1.1 is to be used. */
  h2For(url: URL, opts: https.RequestOptions): H2Pool | undefined {
    if (!this.#o.http2 || url.protocol !== 'https:') return undefined;
    const t = this.#bound(opts);
    t.h2 ??= new H2Pool(
      {
        url,
        secureContext: t.secureContext,
        servername: t.tls.servername,
        rejectUnauthorized: t.tls.rejectUnauthorized,
      },
      {
        idleTimeoutMs: this.#o.idleTimeoutMs,
        pingTimeoutMs: this.#o.pingTimeoutMs,
        connectTimeoutMs: this.#o.timeoutMs,
        maxSessions: MAX_H2_SESSIONS,
      },
    );
    return t.h2.offered ? t.h2 : undefined;
  }

  /** The connections for the TLS material in `opts`, rebuilt when it changed. */
  #bound(opts: https.RequestOptions): Bound {
    const material: Tls = Object.fromEntries(TLS_KEYS.map((k) => [k, opts[k]]));
    if (!this.#tls || !TLS_KEYS.every((k) => same(this.#tls!.tls[k], material[k]))) {
      this.#closeTls();
      // One SecureContext for every connection: without it each new connection parses the CA
      // bundle and key again, which made the connections a slow-start batch opens (1, 2, 4, …
      // 64 of them) cost most of the first batches' time (test/bench/cloneset).
      this.#tls = { tls: material, secureContext: tlsContext(material) };
    }
    return this.#tls;
  }

  #closeTls(): void {
    this.#tls?.agent?.destroy();
    this.#tls?.h2?.close();
    this.#tls = undefined;
  }

  close(): void {
    this.#closeTls();
    this.#http?.destroy();
    this.#http = undefined;
  }
}

/**
 * A KubeRest over node:http2 (or node:http(s) keep-alive connections, at most `maxSockets` of
 * them, for servers without h2), authenticated and TLS-configured from `kc` on every request. A
 * cluster reached through a proxy (proxy-url) keeps the proxy Agent of @kubernetes/client-node,
 * HTTP/1.1 without keep-alive.
 */
export function createKubeRest(kc: KubeCredentials, options: KubeRestOptions = {}): KubeRestClient {
  const o = { ...DEFAULTS, ...options };
  const pool = new Connections(o);
  const streamPool = new Connections({ ...o, ...STREAM_POOL });
  const applier = kubeOptionsApplier(kc, o.tlsRefreshMs);
  /** URL and options of `req`: authenticated and TLS-configured from the kubeconfig as it is now. */
  const prepare = async (req: KubeRequest): Promise<{ url: URL; opts: https.RequestOptions; proxied: boolean }> => {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new AgentError('AGENT_ERR_CONFIG', 'kubeconfig has no current cluster');
    const url = new URL(cluster.server.replace(/\/$/, '') + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const opts: https.RequestOptions = { method: req.method, headers: { Accept: 'application/json' } };
    // Credentials per request: token files (in-cluster, exec plugins) rotate. Through a proxy,
    // client-node's proxy Agent (one per request) is kept.
    if (cluster.proxyUrl) await kc.applyToHTTPSOptions(opts);
    else await applier.apply(opts);
    return { url, opts, proxied: Boolean(cluster.proxyUrl) };
  };
  return {
    async request<T>(req: KubeRequest): Promise<T> {
      const { url, opts, proxied } = await prepare(req);
      const body = req.body === undefined ? undefined : JSON.stringify(req.body);
      if (body !== undefined) {
        // An explicit length: Node frames no body for DELETE otherwise, and on a kept-alive
        // connection its bytes would be read as the start of the next request.
        opts.headers = {
          ...opts.headers,
          'Content-Type': req.contentType ?? 'application/json',
          'Content-Length': Buffer.byteLength(body),
        };
      }
      const limits = {
        timeoutMs: o.timeoutMs,
        signal: req.signal,
        retry: IDEMPOTENT.has(req.method),
        discardBody: req.discardBody === true,
      };
      const h2 = proxied ? undefined : pool.h2For(url, opts);
      let answer = h2 && (await sendH2(h2, url, opts, body, limits));
      if (!answer) {
        if (!proxied) opts.agent = pool.agentFor(url, opts);
        answer = await send(url, opts, body, limits);
      }
      const ok = answer.status >= 200 && answer.status < 300;
      if (ok && req.discardBody) return undefined as T;
      const parsed = parseJson(answer.text);
      if (ok) return parsed as T;
      throw apiError(answer.status, `${req.method} ${req.path}`, parsed, answer.text);
    },
    async stream(req: KubeRequest, onChunk: (chunk: Buffer) => void): Promise<KubeStream> {
      const { url, opts, proxied } = await prepare(req);
      if (!proxied) opts.agent = streamPool.agentFor(url, opts);
      const limits = {
        timeoutMs: o.timeoutMs,
        signal: req.signal,
        retry: IDEMPOTENT.has(req.method),
        discardBody: false,
      };
      try {
        return await openStream(url, opts, onChunk, limits);
      } catch (err) {
        if (err instanceof KubeApiError) throw err;
        if (!limits.retry || !(err instanceof StaleConnection)) throw transportError(opts, url, err);
        try {
          return await openStream(url, opts, onChunk, limits);
        } catch (again) {
          if (again instanceof KubeApiError) throw again;
          throw transportError(opts, url, again instanceof StaleConnection ? again.cause : again);
        }
      }
    },
    close: () => {
      pool.close();
      streamPool.close();
    },
  };
}

/**
 * Sends a request over HTTP/2; undefined when the server turned out not to offer h2 (nothing was
 * sent: the caller uses HTTP/1.1). A stream the server refused unprocessed is sent again whatever
 * the method; an idempotent one also when the session was lost before any answer.
 */
async function sendH2(
  pool: H2Pool,
  url: URL,
  opts: https.RequestOptions,
  body: string | undefined,
  limits: Limits,
): Promise<{ status: number; text: string } | undefined> {
  const headers = { ...(opts.headers as Record<string, string | number | string[]>) };
  if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  const req = {
    method: opts.method!,
    path: url.pathname + url.search,
    headers,
    body,
    timeoutMs: limits.timeoutMs,
    signal: limits.signal,
    discardBody: limits.discardBody,
  };
  try {
    return await pool.request(req);
  } catch (err) {
    if (err instanceof H2NotOffered) return undefined;
    if (!(err instanceof H2Refused || (limits.retry && err instanceof H2SessionLost))) {
      throw transportError(opts, url, err);
    }
  }
  try {
    return await pool.request(req);
  } catch (again) {
    if (again instanceof H2NotOffered) return undefined;
    throw transportError(opts, url, again);
  }
}

/**
 * Sends a GET whose body streams. The request timeout covers only the wait for the answer's
 * head: a watch is silent for minutes, and the informer has its own idle timer for it.
 */
function openStream(
  url: URL,
  opts: https.RequestOptions,
  onChunk: (chunk: Buffer) => void,
  limits: Limits,
): Promise<KubeStream> {
  return new Promise((resolve, reject) => {
    let answered = false;
    let aborted = false;
    let settle!: { resolve: () => void; reject: (err: Error) => void };
    const done = new Promise<void>((res, rej) => (settle = { resolve: res, reject: rej }));
    // Nobody may be waiting on `done` yet when it fails; the caller still sees the rejection.
    done.catch(() => undefined);
    const request = (url.protocol === 'http:' ? http : https).request(
      url,
      { ...opts, signal: limits.signal },
      (res) => {
        answered = true;
        request.setTimeout(0);
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            reject(apiError(status, `${opts.method} ${url.pathname}`, parseJson(text), text));
          });
          return;
        }
        // Dead peers are noticed by TCP between the bookmarks of a quiet watch.
        res.socket.setKeepAlive(true, 30_000);
        res.on('data', (chunk: Buffer) => {
          if (aborted) return;
          try {
            onChunk(chunk);
          } catch (err) {
            aborted = true;
            settle.reject(err instanceof Error ? err : new Error(String(err)));
            request.destroy();
          }
        });
        res.on('end', () => settle.resolve());
        res.on('error', (err) => (aborted ? settle.resolve() : settle.reject(transportError(opts, url, err))));
        res.on('close', () => {
          // Closed without an end: the connection broke mid-body (or we aborted).
          if (aborted || res.complete) settle.resolve();
          else settle.reject(transportError(opts, url, new Error('connection closed before the body ended')));
        });
        resolve({
          done,
          abort: () => {
            aborted = true;
            settle.resolve();
            request.destroy();
          },
        });
      },
    );
    request.setTimeout(limits.timeoutMs, () => request.destroy(new Error(`no answer within ${limits.timeoutMs} ms`)));
    request.on('error', (err: NodeJS.ErrnoException) => {
      if (answered) {
        if (aborted) settle.resolve();
        else settle.reject(transportError(opts, url, err));
        return;
      }
      const stale = request.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
      reject(stale ? new StaleConnection(err.message, { cause: err }) : err);
    });
    request.end();
  });
}

interface Limits {
  timeoutMs: number;
  signal: AbortSignal | undefined;
  /** Send once more when a reused connection was closed before any answer came. */
  retry: boolean;
  /** A 2xx answer's body is read but not kept (its text is ''). */
  discardBody: boolean;
}

async function send(
  url: URL,
  opts: https.RequestOptions,
  body: string | undefined,
  limits: Limits,
): Promise<{ status: number; text: string }> {
  try {
    return await sendOnce(url, opts, body, limits);
  } catch (err) {
    if (!limits.retry || !(err instanceof StaleConnection)) throw transportError(opts, url, err);
    try {
      return await sendOnce(url, opts, body, limits);
    } catch (again) {
      throw transportError(opts, url, again instanceof StaleConnection ? again.cause : again);
    }
  }
}

/** A reused keep-alive connection the server had closed: the request never reached it. */
class StaleConnection extends Error {}

function sendOnce(
  url: URL,
  opts: https.RequestOptions,
  body: string | undefined,
  limits: Limits,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = (url.protocol === 'http:' ? http : https).request(
      url,
      { ...opts, signal: limits.signal },
      (res) => {
        answered = true;
        const status = res.statusCode ?? 0;
        const keep = !(limits.discardBody && status >= 200 && status < 300);
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => void (keep && chunks.push(c)));
        res.on('error', reject);
        res.on('end', () => resolve({ status, text: keep ? Buffer.concat(chunks).toString('utf8') : '' }));
      },
    );
    request.setTimeout(limits.timeoutMs, () => request.destroy(new Error(`no answer within ${limits.timeoutMs} ms`)));
    request.on('error', (err: NodeJS.ErrnoException) => {
      const stale = request.reusedSocket && !answered && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
      reject(stale ? new StaleConnection(err.message, { cause: err }) : err);
    });
    request.end(body);
  });
}

function transportError(opts: https.RequestOptions, url: URL, err: unknown): AgentError {
  const message = err instanceof Error ? err.message : String(err);
  return new AgentError('AGENT_ERR_KUBE_API', `${opts.method} ${url.pathname}: ${message}`, { cause: err });
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A Status body turned into a KubeApiError that names the request, reason and message. */
function apiError(status: number, what: string, parsed: unknown, text: string): KubeApiError {
  const s = (parsed ?? {}) as { reason?: string; message?: string };
  const message = s.message ?? text.slice(0, 200);
  return new KubeApiError(status, `${what}: ${status} ${s.reason ?? ''} ${message}`.replace(/\s+/g, ' ').trim(), {
    reason: s.reason,
    body: parsed,
  });
}
