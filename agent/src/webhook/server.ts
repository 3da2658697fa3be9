import http2 from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { CONVERSION_WEBHOOK_PATH } from '@flotilla/api';
import { parseAdmissionReview, reviewResponse } from './admission/review.js';
import { answerConversionReview } from './conversion/review.js';
import type { AdmissionDecision, AdmissionHandler, AdmissionRequest } from './admission/types.js';
import { AgentError, hasCode } from '../errors.js';
import { promWebhookMetrics, type WebhookServerMetrics } from './metrics.js';

/** PEM serving certificate (chain) and key. */
export interface TlsMaterial {
  certPem: string;
  keyPem: string;
}

export interface WebhookServerOptions {
  /** Address to listen on; 0.0.0.0 in a pod, 127.0.0.1 in tests. */
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  logger: Logger;
  /** Where the server's metrics go: prom-client metrics on `registry`, or `metrics` as given. */
  registry?: Registry;
  metrics?: WebhookServerMetrics;
  /** Largest accepted request body; the apiserver's own limit is 3 MiB per object, twice in an UPDATE. */
  maxBodyBytes?: number;
  /** How long an HTTP/2 session sent away on rotation may stay open before the server closes it. */
  drainGraceMs?: number;
}

const DEFAULT_MAX_BODY = 8 * 1024 * 1024;
/**
 * How long an idle HTTP/1.1 connection is kept. The apiserver's webhook client (client-go's
 * transport) keeps up to 25 idle connections per webhook host for 90 s; closing first would make it
 * pay a TLS handshake on both sides for the next admission (and race a request onto a connection
 * being closed), so the server waits longer than that and leaves closing to the client.
 */
const HTTP1_KEEP_ALIVE_MS = 120_000;
/**
 * After a GOAWAY the client closes the connection itself once its last stream ends (Go's transport
 * does). The server closes it only if the client has not after this long: by then every request
 * sent before the client read the GOAWAY has long been answered.
 */
const DRAIN_GRACE_MS = 30_000;
const STREAM_WINDOW = 1024 * 1024;
const SESSION_WINDOW = 32 * 1024 * 1024;

/**
 * The HTTPS admission server: POST <path> with an AdmissionReview v1 runs the handler registered
 * for that path. A malformed review is answered 400 and never reaches a handler; a handler that
 * throws denies the request with 500 (the webhooks fail closed anyway). `GET /healthz` answers ok.
 *
 * The serving certificate can be replaced at any time (setTls): new connections get the new one,
 * open HTTP/1.1 keep-alive connections finish with the old one and HTTP/2 sessions are sent away
 * (GOAWAY) and left for the client to close, so nothing restarts and nothing fails during a
 * rotation. The server listens only once the first certificate is set.
 */
export class WebhookServer {
  readonly #o: WebhookServerOptions;
  readonly #handlers = new Map<string, AdmissionHandler>();
  readonly #log: Logger;
  readonly #metrics: WebhookServerMetrics | undefined;
  #server: http2.Http2SecureServer | undefined;
  /** Open HTTP/2 sessions and HTTP/1 sockets, to end them on rotation and close. */
  readonly #sessions = new Set<http2.ServerHttp2Session>();
  readonly #sockets = new Set<Socket>();
  /** Sessions sent away on a rotation, waiting for the client to close them. */
  readonly #draining = new Set<http2.ServerHttp2Session>();
  #tls: TlsMaterial | undefined;
  #served = 0;

  constructor(options: WebhookServerOptions) {
    this.#o = options;
    this.#log = options.logger.child({ component: 'webhook-server' });
    this.#metrics = options.metrics ?? (options.registry ? promWebhookMetrics(options.registry) : undefined);
  }

  /** Registers the handler for a path such as `/mutate-pod`. */
  handle(path: string, handler: AdmissionHandler): void {
    this.#handlers.set(path, handler);
  }

  /** Every path served: the registered admission paths and the conversion webhook's. */
  paths(): string[] {
    return [...this.#handlers.keys(), CONVERSION_WEBHOOK_PATH];
  }

  /**
   * Loads or replaces the serving certificate. Open HTTP/2 sessions are asked to go away
   * (GOAWAY: their streams finish, new requests open a new connection), so the apiserver moves
   * to the new certificate instead of keeping one connection on the old one for ever.
   */
  setTls(tls: TlsMaterial): void {
    const replaced = this.#tls !== undefined && this.#tls.certPem !== tls.certPem;
    this.#tls = tls;
    this.#server?.setSecureContext({ cert: tls.certPem, key: tls.keyPem });
    if (replaced) for (const session of this.#sessions) this.#sendAway(session);
  }

  /**
   * Not session.close(): that ends the connection the moment the server's last stream does, while
   * the client may be writing a request it sent before reading the GOAWAY. Its write then fails,
   * and Go's transport fails every stream of the connection with "client connection force closed"
   * instead of retrying the refused ones on a new connection: an admission lost to a rotation.
   */
  #sendAway(session: http2.ServerHttp2Session): void {
    if (this.#draining.has(session) || session.closed || session.destroyed) return;
    this.#draining.add(session);
    session.goaway(http2.constants.NGHTTP2_NO_ERROR);
    // destroy(), not close(): close() would wait for the peer's FIN, which a client that stopped
    // reading never sends, and any stream still open has outlived the apiserver's longest timeout.
    const backstop = setTimeout(() => session.destroy(), this.#o.drainGraceMs ?? DRAIN_GRACE_MS);
    backstop.unref();
    session.once('close', () => {
      clearTimeout(backstop);
      this.#draining.delete(session);
    });
  }

  /** Open HTTP/2 connections, counting those sent away that the client has not closed yet. */
  openSessions(): number {
    return this.#sessions.size;
  }

  /** Admission reviews answered so far (any outcome). */
  served(): number {
    return this.#served;
  }

  /** True once listening with a certificate. */
  isServing(): boolean {
    return this.#server?.listening === true;
  }

  /** The bound port while listening. */
  port(): number | undefined {
    const address = this.#server?.address();
    return address && typeof address === 'object' ? address.port : undefined;
  }

  /**
   * Starts listening; needs a certificate (setTls) first. Resolves the bound port. The server
   * speaks HTTP/2 (and HTTP/1.1 for clients without it): the apiserver then multiplexes its calls
   * over one connection instead of opening a TLS connection per concurrent call over HTTP/1.1,
   * whose handshakes cost more than the admissions under load (test/bench/webhook).
   */
  async listen(): Promise<number> {
    const tls = this.#tls;
    if (!tls) throw new AgentError('WEBHOOK_ERR_NO_CERT', 'set a serving certificate before listening');
    const server = http2.createSecureServer(
      {
        cert: tls.certPem,
        key: tls.keyPem,
        allowHTTP1: true,
        // Room for many reviews in flight on the one connection: HTTP/2's default 64 KiB windows
        // would stall request bodies behind each other.
        settings: { maxConcurrentStreams: 1000, initialWindowSize: STREAM_WINDOW },
      },
      (req: Request, res: Response) => {
        this.#serve(req, res).catch((err: unknown) => {
          this.#log.error({ err, path: req.url }, 'webhook request failed');
          if (!res.headersSent) res.writeHead(500);
          res.end();
        });
      },
    );
    // Node's HTTP/1.1 path of this server has no keep-alive timeout unless given one (never
    // closing idle sockets, even dead peers' ones); the http2 types do not list the field.
    Object.assign(server, { keepAliveTimeout: HTTP1_KEEP_ALIVE_MS });
    server.on('secureConnection', (socket: Socket) => {
      // An answer is one write; Nagle's algorithm would only hold it behind the client's delayed ACK.
      socket.setNoDelay(true);
      this.#metrics?.connection();
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    server.on('session', (session: http2.ServerHttp2Session) => {
      session.setLocalWindowSize(SESSION_WINDOW);
      this.#sessions.add(session);
      session.once('close', () => this.#sessions.delete(session));
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) =>
        reject(
          new AgentError('WEBHOOK_ERR_LISTEN', `cannot listen on ${this.#o.host}:${this.#o.port}`, { cause: err }),
        ),
      );
      server.listen(this.#o.port, this.#o.host, resolve);
    });
    const port = this.port()!;
    this.#log.info({ host: this.#o.host, port, paths: this.paths() }, 'webhook server listening');
    return port;
  }

  /** Stops listening and closes open connections. */
  async close(): Promise<void> {
    const server = this.#server;
    if (!server?.listening) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const session of this.#sessions) session.destroy();
      for (const socket of this.#sockets) socket.destroy();
    });
  }

  async #serve(req: Request, res: Response): Promise<void> {
    const path = new URL(req.url ?? '/', 'https://localhost').pathname;
    if (path === CONVERSION_WEBHOOK_PATH && req.method === 'POST') return this.#convert(req, res);
    const handler = this.#route(req, res, path);
    if (!handler) return;
    const started = performance.now();
    // An overloaded agent reads reviews the apiserver has already given up on (its call timed out
    // and closed the connection); deciding them would only take time from the ones still awaited.
    let gone = false;
    res.once('close', () => (gone = !res.writableEnded));
    const request = await this.#readReview(req, res, path);
    if (!request) return;
    if (gone) {
      this.#metrics?.abandoned();
      return;
    }
    const decision = await this.#decide(handler, request, path);
    const body = JSON.stringify(reviewResponse(request.uid, decision));
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
    this.#served++;
    this.#metrics?.observe(path, decision.allowed, (performance.now() - started) / 1000);
  }

  /**
   * Answers a ConversionReview with api's pure converters (no cache, no I/O), so every replica
   * converts the same way from the moment it listens. Recorded on the admission metrics under
   * path `/convert`, `allowed` meaning the conversion succeeded.
   */
  async #convert(req: Request, res: Response): Promise<void> {
    const started = performance.now();
    let body: string;
    try {
      body = await readBody(req, this.#o.maxBodyBytes ?? DEFAULT_MAX_BODY);
    } catch (err) {
      res.writeHead(413, { 'Content-Type': 'text/plain' }).end(`${err instanceof Error ? err.message : 'too large'}\n`);
      return;
    }
    const answer = answerConversionReview(body);
    if (answer.status !== 200) this.#log.warn({ reason: answer.body.trim() }, 'rejected a malformed conversion review');
    const type = answer.status === 200 ? 'application/json' : 'text/plain';
    res.writeHead(answer.status, { 'Content-Type': type }).end(answer.body);
    this.#metrics?.observe(CONVERSION_WEBHOOK_PATH, answer.succeeded, (performance.now() - started) / 1000);
  }

  /**
   * The handler registered for `path`; undefined when the request was answered here already
   * (health check, unknown path, a method other than POST).
   */
  #route(req: Request, res: Response, path: string): AdmissionHandler | undefined {
    if (req.method === 'GET' && path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
      return undefined;
    }
    const handler = this.#handlers.get(path);
    if (!handler) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`no webhook at ${path}\n`);
      return undefined;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST' }).end();
      return undefined;
    }
    return handler;
  }

  /** The admission request in the body; undefined when the body was too large or no review (answered 413/400). */
  async #readReview(req: Request, res: Response, path: string): Promise<AdmissionRequest | undefined> {
    try {
      return parseAdmissionReview(await readBody(req, this.#o.maxBodyBytes ?? DEFAULT_MAX_BODY));
    } catch (err) {
      const status = hasCode(err, 'WEBHOOK_ERR_BODY_TOO_LARGE') ? 413 : 400;
      this.#log.warn({ path, err }, 'rejected a malformed admission review');
      res
        .writeHead(status, { 'Content-Type': 'text/plain' })
        .end(`${err instanceof Error ? err.message : 'bad request'}\n`);
      return undefined;
    }
  }

  /** The handler's decision; a handler that throws denies the request with 500. */
  async #decide(handler: AdmissionHandler, request: AdmissionRequest, path: string): Promise<AdmissionDecision> {
    try {
      return await handler(request);
    } catch (err) {
      this.#log.error(
        { err, path, kind: request.kind.kind, namespace: request.namespace, name: request.name },
        'admission handler failed; denying',
      );
      return {
        allowed: false,
        code: 500,
        reason: 'InternalError',
        message: `flotilla webhook ${path} failed: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
  }
}

/** A request over HTTP/2 or, from clients without it, HTTP/1.1 (the compatibility API gives both). */
type Request = http2.Http2ServerRequest | IncomingMessage;
type Response = http2.Http2ServerResponse | ServerResponse;

function readBody(req: Request, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new AgentError('WEBHOOK_ERR_BODY_TOO_LARGE', `request body exceeds ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
