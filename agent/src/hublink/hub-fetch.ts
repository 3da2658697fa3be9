/**
 * The few JSON requests the agent makes to the hub's REST API (register, claim, renew), over
 * node:http(s) with the hub's CA (--hub-ca-file) or no verification (--insecure). Not the global
 * fetch: its undici, and the npm undici a CA would need with it, kept about 25 MiB resident in
 * every agent for a handful of requests a day (test/bench/kruise/README.md).
 */
import http from 'node:http';
import https from 'node:https';
import type { HubConfig } from './config.js';

export interface HubRequest {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** What postToHub reads of an answer; a fetch Response has this shape too. */
export interface HubAnswer {
  status: number;
  json(): Promise<unknown>;
}

export type HubFetch = (url: string, request: HubRequest) => Promise<HubAnswer>;

/** A request that has sent nothing back for this long fails (the caller retries with backoff). */
export const HUB_REQUEST_TIMEOUT_MS = 30_000;

export function hubFetch(hub: Pick<HubConfig, 'caPem' | 'insecure'>): HubFetch {
  const tls: https.RequestOptions = {
    ...(hub.caPem !== undefined ? { ca: hub.caPem } : {}),
    rejectUnauthorized: !hub.insecure,
  };
  return (url, request) =>
    new Promise<HubAnswer>((resolve, reject) => {
      const target = new URL(url);
      const headers: Record<string, string | number> = { ...request.headers };
      if (request.body !== undefined) headers['content-length'] = Buffer.byteLength(request.body);
      const options: https.RequestOptions = {
        method: request.method,
        headers,
        ...(request.signal ? { signal: request.signal } : {}),
        ...(target.protocol === 'https:' ? tls : {}),
      };
      const send = target.protocol === 'https:' ? https.request : http.request;
      const req = send(target, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            json: () => Promise.resolve().then(() => JSON.parse(text) as unknown),
          });
        });
      });
      req.setTimeout(HUB_REQUEST_TIMEOUT_MS, () =>
        req.destroy(new Error(`hub request ${request.method} ${target.pathname} timed out after 30 s`)),
      );
      req.on('error', reject);
      req.end(request.body);
    });
}
