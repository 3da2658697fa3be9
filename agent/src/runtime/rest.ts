import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { KubeConfig } from '@kubernetes/client-node';
import { AgentError, KubeApiError } from '../errors.js';

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
}

/**
 * Raw JSON access to the apiserver. The typed clients of @kubernetes/client-node turn timestamps
 * into Date objects, drop fields they don't know and serialize MicroTime with milliseconds (which
 * the apiserver rejects); the runtime reads and writes objects exactly as they are on the wire.
 */
export interface KubeRest {
  /** Resolves the parsed JSON body of a 2xx answer; rejects with KubeApiError (HTTP status) or AgentError. */
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
   * Most connections open to the apiserver at once; further requests wait for a free one.
   * Default 128: the CloneSet controller's 64 concurrent creates plus status, event and other
   * controllers' writes. Watches do not count: they use connections of their own.
   */
  maxSockets?: number;
  /** Most idle connections kept open for reuse; default 64. */
  maxFreeSockets?: number;
  /**
   * An idle connection is closed after this long; default 30 s, well below the apiserver's 90 s
   * idle timeout, so we never reuse a connection the server is closing at that moment.
   */
  idleTimeoutMs?: number;
}

const DEFAULTS = { timeoutMs: 30_000, maxSockets: 128, maxFreeSockets: 64, idleTimeoutMs: 30_000 };
/**
 * Streams (watches) get their own Agents: one connection each for as long as they last, never
 * taking a socket the writes need; kept alive so the next watch after a server-side timeout
 * reuses the connection instead of paying another TLS handshake.
 */
const STREAM_POOL = { maxSockets: Infinity, maxFreeSockets: 16 };

/** RFC 9110 idempotent methods: safe to send again when a reused connection turned out to be closed. */
const IDEMPOTENT = new Set<KubeRequest['method']>(['GET', 'PUT', 'DELETE']);

/** The TLS material an Agent's connections are bound to. */
type Tls = Pick<
  https.RequestOptions,
  'ca' | 'cert' | 'key' | 'pfx' | 'passphrase' | 'rejectUnauthorized' | 'servername'
>;
const TLS_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

/** TLS material is re-read from its files on every request, so it is compared by content. */
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
 * Keep-alive Agents for one client. @kubernetes/client-node's applyToHTTPSOptions puts a new
 * Agent on every request, so each request would pay a TLS handshake on both sides, which cuts
 * the pod-create rate an apiserver sustains to about a third (test/bench/cloneset). The https
 * Agent is rebuilt when the TLS material changes (rotated client certificates); credentials in
 * headers are applied per request anyway (token files rotate).
 */
class AgentPool {
  readonly #o: typeof DEFAULTS;
  #https: { tls: Tls; agent: https.Agent } | undefined;
  #http: http.Agent | undefined;

  constructor(options: typeof DEFAULTS) {
    this.#o = options;
  }

  /** The Agent for a request to `url` with `opts` as applyToHTTPSOptions filled them. */
  agentFor(url: URL, opts: https.RequestOptions): http.Agent | undefined {
    const kept = { keepAlive: true, maxSockets: this.#o.maxSockets, maxFreeSockets: this.#o.maxFreeSockets };
    // Idle sockets time out after this; a request in flight has its own timeout (request.setTimeout).
    const timeout = this.#o.idleTimeoutMs;
    if (url.protocol === 'http:') return (this.#http ??= new http.Agent({ ...kept, timeout }));
    const tls: Tls = Object.fromEntries(TLS_KEYS.map((k) => [k, opts[k]]));
    if (!this.#https || !TLS_KEYS.every((k) => same(this.#https!.tls[k], tls[k]))) {
      this.#https?.agent.destroy();
      // One SecureContext for every connection: without it each new connection parses the CA
      // bundle and key again, which made the connections a slow-start batch opens (1, 2, 4, …
      // 64 of them) cost most of the first batches' time (test/bench/cloneset).
      const secureContext = tlsContext(tls);
      this.#https = { tls, agent: new https.Agent({ ...tls, secureContext, ...kept, timeout }) };
    }
    return this.#https.agent;
  }

  close(): void {
    this.#https?.agent.destroy();
    this.#http?.destroy();
    this.#https = undefined;
    this.#http = undefined;
  }
}

/**
 * A KubeRest over node:http(s) that keeps its connections open between requests (at most
 * `maxSockets` of them), authenticated and TLS-configured from `kc` on every request. A cluster
 * reached through a proxy (proxy-url) keeps the proxy Agent of @kubernetes/client-node, without
 * keep-alive.
 */
export function createKubeRest(kc: KubeConfig, options: KubeRestOptions = {}): KubeRestClient {
  const o = { ...DEFAULTS, ...options };
  const pool = new AgentPool(o);
  const streamPool = new AgentPool({ ...o, ...STREAM_POOL });
  /** URL and options of `req`: authenticated and TLS-configured from the kubeconfig as it is now. */
  const prepare = async (req: KubeRequest, agents: AgentPool): Promise<{ url: URL; opts: https.RequestOptions }> => {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new AgentError('AGENT_ERR_CONFIG', 'kubeconfig has no current cluster');
    const url = new URL(cluster.server.replace(/\/$/, '') + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const opts: https.RequestOptions = { method: req.method, headers: { Accept: 'application/json' } };
    // Applied per request: token files (in-cluster, exec plugins) rotate.
    await kc.applyToHTTPSOptions(opts);
    if (!cluster.proxyUrl) opts.agent = agents.agentFor(url, opts);
    return { url, opts };
  };
  return {
    async request<T>(req: KubeRequest): Promise<T> {
      const { url, opts } = await prepare(req, pool);
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
      const limits = { timeoutMs: o.timeoutMs, signal: req.signal, retry: IDEMPOTENT.has(req.method) };
      const { status, text } = await send(url, opts, body, limits);
      const parsed = parseJson(text);
      if (status >= 200 && status < 300) return parsed as T;
      throw apiError(status, `${req.method} ${req.path}`, parsed, text);
    },
    async stream(req: KubeRequest, onChunk: (chunk: Buffer) => void): Promise<KubeStream> {
      const { url, opts } = await prepare(req, streamPool);
      const limits = { timeoutMs: o.timeoutMs, signal: req.signal, retry: IDEMPOTENT.has(req.method) };
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
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
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
