/**
 * A KubeRest that keeps its TLS connections open between requests. The runtime's client takes
 * the https.Agent @kubernetes/client-node builds in applyToHTTPSOptions, which is a new Agent on
 * every call: every request pays a TLS handshake on both sides, which halves the pod-create rate
 * an apiserver sustains (see test/bench/cloneset). The CloneSet controller writes pods in bulk, so
 * it uses this client for its writes until the runtime reuses connections itself.
 *
 * Credentials are still applied per request (token files rotate); the Agent is rebuilt when the
 * TLS material changes.
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { AgentError, KubeApiError } from '../../errors.js';
import type { KubeRequest, KubeRest } from '../../runtime/rest.js';

export interface KeepAliveRestOptions {
  /** Per-request timeout; default 30 s. */
  timeoutMs?: number;
  /** Most connections to the apiserver; default 128. */
  maxSockets?: number;
}

type Tls = Pick<https.RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;

/** TLS material is re-read from files on every call, so it is compared by content. */
function same(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  return a === b;
}

function sameTls(a: Tls, b: Tls): boolean {
  return (['ca', 'cert', 'key', 'rejectUnauthorized', 'servername'] as const).every((k) => same(a[k], b[k]));
}

function parse(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A KubeRest over one keep-alive Agent per TLS identity. */
export function keepAliveKubeRest(kc: KubeConfig, options: KeepAliveRestOptions = {}): KubeRest {
  const timeoutMs = options.timeoutMs ?? 30_000;
  let pool: { tls: Tls; agent: https.Agent } | undefined;

  const agentFor = (tls: Tls): https.Agent => {
    if (!pool || !sameTls(pool.tls, tls)) {
      pool?.agent.destroy();
      pool = { tls, agent: new https.Agent({ ...tls, keepAlive: true, maxSockets: options.maxSockets ?? 128 }) };
    }
    return pool.agent;
  };

  return {
    async request<T>(req: KubeRequest): Promise<T> {
      const cluster = kc.getCurrentCluster();
      if (!cluster) throw new AgentError('AGENT_ERR_CONFIG', 'kubeconfig has no current cluster');
      const url = new URL(cluster.server.replace(/\/$/, '') + req.path);
      for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
      const opts: https.RequestOptions = { method: req.method, headers: { Accept: 'application/json' } };
      await kc.applyToHTTPSOptions(opts);
      const { ca, cert, key, rejectUnauthorized, servername } = opts;
      opts.agent = url.protocol === 'https:' ? agentFor({ ca, cert, key, rejectUnauthorized, servername }) : undefined;
      const body = req.body === undefined ? undefined : JSON.stringify(req.body);
      if (body !== undefined) {
        // An explicit length: Node frames no body for DELETE otherwise, and on a kept-alive
        // connection its bytes would be read as the start of the next request.
        const length = Buffer.byteLength(body);
        opts.headers = {
          ...opts.headers,
          'Content-Type': req.contentType ?? 'application/json',
          'Content-Length': length,
        };
      }
      const what = `${req.method} ${req.path}`;
      const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const fail = (err: Error): void =>
          reject(new AgentError('AGENT_ERR_KUBE_API', `${what}: ${err.message}`, { cause: err }));
        const request = (url.protocol === 'http:' ? http : https).request(
          url,
          { ...opts, signal: req.signal },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('error', fail);
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          },
        );
        request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
        request.on('error', fail);
        request.end(body);
      });
      const parsed = parse(text);
      if (status >= 200 && status < 300) return parsed as T;
      const s = (parsed ?? {}) as { reason?: string; message?: string };
      const message = `${what}: ${status} ${s.reason ?? ''} ${s.message ?? text.slice(0, 200)}`
        .replace(/\s+/g, ' ')
        .trim();
      throw new KubeApiError(status, message, { reason: s.reason, body: parsed });
    },
  };
}
