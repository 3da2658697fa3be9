import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { AgentError } from '../errors.js';

/** A health check: resolves true when healthy; false or a throw (whose message is shown) when not. */
export type HealthCheck = () => boolean | Promise<boolean>;

export interface HealthServerOptions {
  /** 0 picks a free port (tests). */
  port: number;
  /** Default 0.0.0.0: kubelet probes come from outside the pod's loopback. */
  host?: string;
  registry: Registry;
  logger: Logger;
  /** A check slower than this fails; default 5 s. */
  checkTimeoutMs?: number;
}

/**
 * Serves `/healthz` (liveness), `/readyz` (readiness) and `/metrics` on a plain node:http
 * server. Probe answers follow the apiserver's: `ok`, or 503 with one `[-]name failed: reason`
 * line per failing check (`?verbose` lists the passing ones too).
 */
export class HealthServer {
  readonly #o: HealthServerOptions;
  readonly #live = new Map<string, HealthCheck>();
  readonly #ready = new Map<string, HealthCheck>();
  #server: http.Server | undefined;

  constructor(options: HealthServerOptions) {
    this.#o = options;
  }

  addLivenessCheck(name: string, check: HealthCheck): void {
    this.#live.set(name, check);
  }

  addReadinessCheck(name: string, check: HealthCheck): void {
    this.#ready.set(name, check);
  }

  /** Listens and resolves the bound port. */
  async start(): Promise<number> {
    const server = http.createServer((req, res) => {
      this.#handle(req, res).catch((err: unknown) => {
        this.#o.logger.error({ err, url: req.url }, 'health server request failed');
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) =>
        reject(new AgentError('AGENT_ERR_HEALTH_SERVER', `cannot listen on port ${this.#o.port}`, { cause: err })),
      );
      server.listen(this.#o.port, this.#o.host ?? '0.0.0.0', resolve);
    });
    const port = (server.address() as AddressInfo).port;
    this.#o.logger.info({ port }, 'health server listening');
    return port;
  }

  /** The bound port while listening. */
  port(): number | undefined {
    const address = this.#server?.address();
    return address && typeof address === 'object' ? address.port : undefined;
  }

  /** Stops listening and closes open connections. */
  async close(): Promise<void> {
    const server = this.#server;
    if (!server?.listening) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    if (url.pathname === '/metrics') {
      const body = await this.#o.registry.metrics();
      res.writeHead(200, { 'Content-Type': this.#o.registry.contentType }).end(body);
      return;
    }
    const checks = url.pathname === '/healthz' ? this.#live : url.pathname === '/readyz' ? this.#ready : undefined;
    if (!checks) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    const results = await Promise.all(
      [...checks].map(async ([name, check]) => ({ name, ...(await this.#run(check)) })),
    );
    const healthy = results.every((r) => r.ok);
    const verbose = url.searchParams.has('verbose');
    const lines = results
      .filter((r) => verbose || !r.ok)
      .map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: ${r.reason}`));
    const body = healthy && !verbose ? 'ok\n' : `${lines.join('\n')}\n${healthy ? 'ok' : 'check failed'}\n`;
    res.writeHead(healthy ? 200 : 503, { 'Content-Type': 'text/plain; charset=utf-8' }).end(body);
  }

  async #run(check: HealthCheck): Promise<{ ok: boolean; reason?: string }> {
    const timeoutMs = this.#o.checkTimeoutMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const ok = await Promise.race([Promise.resolve().then(check), timeout]);
      return ok ? { ok: true } : { ok: false, reason: 'not ready' };
    } catch (err) {
      return { ok: false, reason: err instanceof Error ? err.message : String(err) };
    } finally {
      clearTimeout(timer);
    }
  }
}
