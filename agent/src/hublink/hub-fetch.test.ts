import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, createServingCert } from '../webhook/certs/pki.js';
import { hubFetch } from './hub-fetch.js';
import { isCertificateError } from './tls.js';

const seen: { method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
const handler: http.RequestListener = (req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, body });
    res.writeHead(req.url === '/missing' ? 404 : 201, { 'content-type': 'application/json' });
    res.end(req.url === '/text' ? 'not json' : JSON.stringify({ echo: JSON.parse(body || 'null') }));
  });
};

let plain: http.Server;
let secure: https.Server;
let caPem: string;
const url = (s: http.Server, scheme: string, p: string): string =>
  `${scheme}://127.0.0.1:${(s.address() as AddressInfo).port}${p}`;

beforeAll(async () => {
  const now = Date.now();
  const ca = await createCa('hub-fetch test CA', now, 3_600_000);
  const serving = await createServingCert(ca, ['127.0.0.1'], now, 3_600_000);
  caPem = ca.certPem;
  plain = http.createServer(handler);
  secure = https.createServer({ cert: serving.certPem, key: serving.keyPem }, handler);
  await Promise.all([plain, secure].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
});
afterAll(async () => {
  await Promise.all([plain, secure].map((s) => new Promise((r) => s.close(r))));
});

describe('hubFetch', () => {
  it('POSTs JSON with its headers and a length, and answers status and body', async () => {
    const res = await hubFetch({ caPem: undefined, insecure: false })(url(plain, 'http', '/api/v1/x'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer t' },
      body: JSON.stringify({ a: 'é' }),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ echo: { a: 'é' } });
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ method: 'POST', url: '/api/v1/x', body: '{"a":"é"}' });
    expect(last.headers).toMatchObject({
      authorization: 'Bearer t',
      'content-length': String(Buffer.byteLength('{"a":"é"}')),
    });
  });

  it('verifies the hub against its CA', async () => {
    const res = await hubFetch({ caPem, insecure: false })(url(secure, 'https', '/missing'), {
      method: 'POST',
      headers: {},
      body: '{}',
    });
    expect(res.status).toBe(404);
  });

  it('fails with a certificate error when the CA does not match, and skips verification with insecure', async () => {
    const err = await hubFetch({ caPem: undefined, insecure: false })(url(secure, 'https', '/'), {
      method: 'POST',
      headers: {},
    }).catch((e: unknown) => e);
    expect(isCertificateError(err)).toBe(true);
    const res = await hubFetch({ caPem: undefined, insecure: true })(url(secure, 'https', '/'), {
      method: 'POST',
      headers: {},
    });
    expect(res.status).toBe(201);
  });

  it('rejects json() of a body that is not JSON, and stops on abort', async () => {
    const res = await hubFetch({ caPem: undefined, insecure: false })(url(plain, 'http', '/text'), {
      method: 'POST',
      headers: {},
    });
    await expect(res.json()).rejects.toThrow(SyntaxError);
    const abort = new AbortController();
    abort.abort();
    await expect(
      hubFetch({ caPem: undefined, insecure: false })(url(plain, 'http', '/'), {
        method: 'POST',
        headers: {},
        signal: abort.signal,
      }),
    ).rejects.toMatchObject({ name: 'AbortError' });
  });
});
