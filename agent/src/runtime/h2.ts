/**
 * HTTP/2 sessions to one apiserver, as client-go talks to it: every request is a stream on one
 * multiplexed TLS connection, so a burst of requests (a slow-start batch of pod creations) needs
 * no new connections and no TLS handshakes. Another session opens only when every open one
 * carries as many streams as the server allows (Go's transport does the same).
 */
import http2 from 'node:http2';
import { isIP } from 'node:net';
import tls from 'node:tls';

const { NGHTTP2_NO_ERROR, NGHTTP2_REFUSED_STREAM, NGHTTP2_CANCEL } = http2.constants;

/** Per-stream flow-control window we grant the server: a LIST of thousands of pods flows without stalls. */
const STREAM_WINDOW = 4 << 20;
/** The whole session's window, for several big answers at once. */
const SESSION_WINDOW = 32 << 20;
/** Streams assumed allowed until the server's SETTINGS arrive (the apiserver announces 100 or more). */
const ASSUMED_MAX_STREAMS = 100;
/** Request headers HTTP/2 forbids (RFC 9113 §8.2.2) or sets itself. */
const CONNECTION_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'host',
]);

export interface H2PoolOptions {
  /** A session without streams for this long is closed. */
  idleTimeoutMs: number;
  /** A session that does not answer a PING within this long is destroyed (its streams fail). */
  pingTimeoutMs: number;
  /** The TLS handshake must finish within this long. */
  connectTimeoutMs: number;
  /** Most sessions open at once; beyond it streams queue in the least busy session. */
  maxSessions: number;
}

/** Where and how to connect: the TLS options are those of the kubeconfig, with a shared SecureContext. */
export interface H2Target {
  url: URL;
  secureContext: tls.SecureContext;
  servername?: string;
  rejectUnauthorized?: boolean;
}

export interface H2Request {
  method: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string | number | string[]>;
  body: string | undefined;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  /** A 2xx answer's body is read but not kept: its text is ''. */
  discardBody?: boolean;
}

/**
 * The request was never processed by the server (RST_STREAM REFUSED_STREAM, a stream above a
 * GOAWAY's last stream id, or a session that was already going away): safe to send again
 * whatever the method.
 */
export class H2Refused extends Error {}

/** The session ended before any answer came: safe to send again only for idempotent methods. */
export class H2SessionLost extends Error {}

/** The server did not choose h2 in ALPN: use HTTP/1.1 for it. */
export class H2NotOffered extends Error {}

interface Session {
  /** Resolves once the TLS handshake chose h2 and the session is set up. */
  ready: Promise<http2.ClientHttp2Session>;
  /** Set once ready. */
  session: http2.ClientHttp2Session | undefined;
  /** Streams in flight or waiting for the session. */
  active: number;
  /** GOAWAY received, closing or destroyed: no new streams. */
  closing: boolean;
  /** A PING is out to check the session is alive. */
  pinging: boolean;
}

/** One TLS connection negotiated with ALPN; rejects with H2NotOffered when the server chose HTTP/1.1. */
function connectTls(target: H2Target, timeoutMs: number): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const host = target.url.hostname.replace(/^\[(.*)\]$/, '$1');
    const socket = tls.connect({
      host,
      port: Number(target.url.port || 443),
      servername: target.servername ?? (isIP(host) ? undefined : host),
      secureContext: target.secureContext,
      rejectUnauthorized: target.rejectUnauthorized ?? true,
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    const onError = (err: Error): void => {
      clearTimeout(timer);
      reject(err);
    };
    const timer = setTimeout(
      () => socket.destroy(new Error(`TLS handshake not done within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.once('error', onError);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      socket.removeListener('error', onError);
      if (socket.alpnProtocol === 'h2') return resolve(socket);
      socket.destroy();
      reject(new H2NotOffered(`${target.url.host} offers no HTTP/2 (ALPN ${socket.alpnProtocol || 'none'})`));
    });
  });
}

/**
 * HTTP/2 sessions to one server with one set of TLS material. Idle sessions are closed after
 * `idleTimeoutMs` and never keep the process alive; a session whose request timed out, or that
 * was silent for `idleTimeoutMs` with streams open, is PINGed and destroyed without an answer.
 */
export class H2Pool {
  readonly #target: H2Target;
  readonly #o: H2PoolOptions;
  readonly #sessions: Session[] = [];
  /** Set when the server chose HTTP/1.1: every later request takes the HTTP/1.1 path. */
  #notOffered: H2NotOffered | undefined;

  constructor(target: H2Target, options: H2PoolOptions) {
    this.#target = target;
    this.#o = options;
  }

  /** False once the server was seen not to offer h2. */
  get offered(): boolean {
    return this.#notOffered === undefined;
  }

  /** Sessions open or opening. */
  get sessions(): number {
    return this.#sessions.length;
  }

  /**
   * Sends one request and resolves its status and body. Rejects with H2Refused, H2SessionLost
   * or H2NotOffered as described there, or with the transport error.
   */
  async request(req: H2Request): Promise<{ status: number; text: string }> {
    if (this.#notOffered) throw this.#notOffered;
    const entry = this.#pick();
    entry.active++;
    try {
      const session = await entry.ready;
      session.ref();
      return await this.#send(entry, session, req);
    } finally {
      // An idle session never keeps the process alive.
      if (--entry.active === 0) entry.session?.unref();
    }
  }

  /** Closes every session: in-flight streams finish first; later requests open new sessions. */
  close(): void {
    for (const s of this.#sessions.splice(0)) {
      s.closing = true;
      if (!s.session)
        s.ready.then(
          (session) => session.destroy(),
          () => undefined,
        );
      else if (s.active === 0) s.session.destroy();
      else s.session.close();
    }
  }

  /** A session with room for one more stream, opening one when all are full. */
  #pick(): Session {
    let least: Session | undefined;
    for (const s of this.#sessions) {
      if (s.closing) continue;
      if (s.active < (s.session?.remoteSettings.maxConcurrentStreams ?? ASSUMED_MAX_STREAMS)) return s;
      if (!least || s.active < least.active) least = s;
    }
    // nghttp2 holds streams beyond the server's limit until one finishes.
    if (least && this.#sessions.length >= this.#o.maxSessions) return least;
    return this.#open();
  }

  #open(): Session {
    const entry: Session = { ready: undefined!, session: undefined, active: 0, closing: false, pinging: false };
    const drop = (): void => {
      entry.closing = true;
      const i = this.#sessions.indexOf(entry);
      if (i >= 0) this.#sessions.splice(i, 1);
    };
    entry.ready = connectTls(this.#target, this.#o.connectTimeoutMs).then(
      (socket) => {
        const session = http2.connect(this.#target.url.origin, {
          settings: { enablePush: false, initialWindowSize: STREAM_WINDOW },
          createConnection: () => socket,
        });
        session.setLocalWindowSize(SESSION_WINDOW);
        // Errors reach the streams; the session only leaves the pool.
        session.on('error', drop);
        session.once('goaway', drop);
        session.once('close', drop);
        session.setTimeout(this.#o.idleTimeoutMs, () => {
          if (entry.active > 0) return this.#check(entry);
          drop();
          session.close();
        });
        entry.session = session;
        if (entry.closing && entry.active === 0) session.destroy();
        return session;
      },
      (err: unknown) => {
        if (err instanceof H2NotOffered) this.#notOffered = err;
        drop();
        throw err;
      },
    );
    // Whoever waits on `ready` sees the failure; nobody may be waiting.
    entry.ready.catch(() => undefined);
    this.#sessions.push(entry);
    return entry;
  }

  /** PINGs the session; no answer within pingTimeoutMs destroys it, failing its streams. */
  #check(entry: Session): void {
    const session = entry.session;
    if (!session || entry.pinging || session.destroyed) return;
    entry.pinging = true;
    const timer = setTimeout(
      () => session.destroy(new Error(`no answer to PING within ${this.#o.pingTimeoutMs} ms`)),
      this.#o.pingTimeoutMs,
    );
    timer.unref();
    const sent = session.ping((err) => {
      entry.pinging = false;
      clearTimeout(timer);
      if (err && !session.destroyed) session.destroy(err);
    });
    if (!sent) {
      entry.pinging = false;
      clearTimeout(timer);
    }
  }

  #send(entry: Session, session: http2.ClientHttp2Session, req: H2Request): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const headers: http2.OutgoingHttpHeaders = { ':method': req.method, ':path': req.path };
      for (const [k, v] of Object.entries(req.headers)) {
        const name = k.toLowerCase();
        if (!CONNECTION_HEADERS.has(name)) headers[name] = v;
      }
      let stream: http2.ClientHttp2Stream;
      try {
        stream = session.request(headers, { endStream: req.body === undefined, signal: req.signal });
      } catch (err) {
        // A session going away or gone refuses new streams before anything is sent.
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ERR_HTTP2_GOAWAY_SESSION' || code === 'ERR_HTTP2_INVALID_SESSION') {
          entry.closing = true;
          reject(new H2Refused((err as Error).message, { cause: err }));
        } else reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      let status = 0;
      let keep = true;
      let ended = false;
      let failure: Error | undefined;
      const chunks: Buffer[] = [];
      stream.on('response', (h) => {
        status = Number(h[':status']);
        keep = !(req.discardBody && status >= 200 && status < 300);
      });
      stream.on('data', (c: Buffer) => void (keep && chunks.push(c)));
      // A stream whose session died also ends, but already closed and reset: only a clean end counts.
      stream.on('end', () => (ended = !stream.closed || stream.rstCode === NGHTTP2_NO_ERROR));
      stream.on('error', (err: Error) => void (failure ??= err));
      stream.setTimeout(req.timeoutMs, () => {
        failure ??= new Error(`no answer within ${req.timeoutMs} ms`);
        stream.close(NGHTTP2_CANCEL);
        this.#check(entry);
      });
      stream.on('close', () => {
        if (status !== 0 && ended && stream.rstCode === NGHTTP2_NO_ERROR && failure === undefined) {
          resolve({ status, text: keep ? Buffer.concat(chunks).toString('utf8') : '' });
        } else if (stream.rstCode === NGHTTP2_REFUSED_STREAM && status === 0) {
          reject(new H2Refused('the server refused the stream (REFUSED_STREAM)', { cause: failure }));
        } else if (failure) {
          reject(failure);
        } else if (status === 0) {
          reject(new H2SessionLost('the connection closed before an answer came'));
        } else {
          reject(new Error(`the connection closed before the body ended (code ${stream.rstCode})`));
        }
      });
      if (req.body !== undefined) stream.end(req.body);
    });
  }
}
