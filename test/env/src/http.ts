import http from 'node:http';
import https from 'node:https';

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
