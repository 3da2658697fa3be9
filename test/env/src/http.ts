import http from 'node:http';
import https from 'node:https';
import { Agent } from 'undici';

export interface ProbeResponse {
  status: number;
  body: string;
}

/** A tiny GET for readiness probes (fetch in Node 20 cannot take a custom CA). */
export async function get(
  url: string,
  opts: { ca?: string; token?: string; timeoutMs?: number } = {},
): Promise<ProbeResponse> {
  const mod = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.get(
      url,
      {
        ca: opts.ca,
        headers: opts.token ? { Authorization: `Bearer ${opts.token}` } : {},
        timeout: opts.timeoutMs ?? 3000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout GET ${url}`)));
    req.on('error', reject);
  });
}

/** fetch that verifies https servers against `caPem` (Node 20's fetch takes no CA of its own). */
export function caFetch(caPem: string): typeof fetch {
  const dispatcher = new Agent({ connect: { ca: caPem } });
  return (input, init) => fetch(input, { ...init, dispatcher });
}
