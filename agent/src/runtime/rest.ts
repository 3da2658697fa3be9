import http from 'node:http';
import https from 'node:https';
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

export interface KubeRestOptions {
  /** Per-request timeout; default 30 s. */
  timeoutMs?: number;
}

/** A KubeRest over node:http(s), authenticated and TLS-configured from `kc` on every request. */
export function createKubeRest(kc: KubeConfig, options: KubeRestOptions = {}): KubeRest {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return {
    async request<T>(req: KubeRequest): Promise<T> {
      const cluster = kc.getCurrentCluster();
      if (!cluster) throw new AgentError('AGENT_ERR_CONFIG', 'kubeconfig has no current cluster');
      const url = new URL(cluster.server.replace(/\/$/, '') + req.path);
      for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
      const opts: https.RequestOptions = { method: req.method, headers: { Accept: 'application/json' } };
      // Applied per request: token files (in-cluster, exec plugins) rotate.
      await kc.applyToHTTPSOptions(opts);
      const body = req.body === undefined ? undefined : JSON.stringify(req.body);
      if (body !== undefined) {
        opts.headers = { ...opts.headers, 'Content-Type': req.contentType ?? 'application/json' };
      }
      const { status, text } = await send(url, opts, body, { timeoutMs, signal: req.signal });
      const parsed = parseJson(text);
      if (status >= 200 && status < 300) return parsed as T;
      throw apiError(status, `${req.method} ${req.path}`, parsed, text);
    },
  };
}

function send(
  url: URL,
  opts: https.RequestOptions,
  body: string | undefined,
  limits: { timeoutMs: number; signal: AbortSignal | undefined },
): Promise<{ status: number; text: string }> {
  const what = `${opts.method} ${url.pathname}`;
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'http:' ? http : https).request(
      url,
      { ...opts, signal: limits.signal },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => reject(transportError(what, err)));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    request.setTimeout(limits.timeoutMs, () => request.destroy(new Error(`no answer within ${limits.timeoutMs} ms`)));
    request.on('error', (err) => reject(transportError(what, err)));
    request.end(body);
  });
}

function transportError(what: string, err: Error): AgentError {
  return new AgentError('AGENT_ERR_KUBE_API', `${what}: ${err.message}`, { cause: err });
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
