/**
 * The webhook's HTTPS server on its own (no cluster): it answers over HTTP/2 (the apiserver's
 * choice for loopback URLs only) and over HTTP/1.1, which the apiserver uses for a Service or any
 * other URL and whose connections the server keeps longer than the apiserver's idle pool does; a
 * new serving certificate sends open HTTP/2 sessions away so the next connection presents it.
 */
import http2 from 'node:http2';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { allow } from '../../../agent/src/webhook/admission/review.js';
import { createCa, createServingCert } from '../../../agent/src/webhook/certs/pki.js';
import { WebhookServer } from '../../../agent/src/webhook/server.js';

const HOUR = 3600_000;
const review = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'u-1',
    operation: 'CREATE',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace: 'default',
    object: { metadata: { name: 'p' }, spec: { containers: [] } },
  },
});

let ca: { certPem: string; keyPem: string };
let server: WebhookServer;
let port: number;
const registry = new Registry();
const connectionsSoFar = async (): Promise<number> =>
  (await registry.getSingleMetric('flotilla_webhook_tls_connections_total')!.get()).values[0]?.value ?? 0;

/** One review over HTTP/1.1 through `agent`; the socket it went over and the Keep-Alive header. */
function postH1(agent: https.Agent): Promise<{ status: number; socket: unknown; keepAlive?: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path: '/mutate-pod', method: 'POST', ca: ca.certPem, agent },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            socket: req.socket,
            keepAlive: res.headers['keep-alive'] as string | undefined,
          }),
        );
      },
    );
    req.setHeader('content-type', 'application/json');
    req.on('error', reject);
    req.end(review);
  });
}

function postH2(session: http2.ClientHttp2Session): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':method': 'POST', ':path': '/mutate-pod', 'content-type': 'application/json' });
    let status = 0;
    let body = '';
    req.on('response', (headers) => (status = Number(headers[':status'])));
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve({ status, body }));
    req.on('error', reject);
    req.end(review);
  });
}

const serialOf = (session: http2.ClientHttp2Session): string =>
  (session.socket as TLSSocket).getPeerCertificate().serialNumber;

describe('webhook HTTPS server', () => {
  beforeAll(async () => {
    ca = await createCa('test-ca', Date.now(), HOUR);
    server = new WebhookServer({
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
      registry,
    });
    server.handle('/mutate-pod', () => allow());
    server.setTls(await createServingCert(ca, ['127.0.0.1'], Date.now(), HOUR));
    port = await server.listen();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers an AdmissionReview over HTTP/2 and over HTTP/1.1', async () => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { ca: ca.certPem });
    try {
      const h2 = await postH2(session);
      expect(h2.status).toBe(200);
      expect(JSON.parse(h2.body)).toMatchObject({ response: { uid: 'u-1', allowed: true } });
    } finally {
      session.close();
    }
    const h1 = await new Promise<{ status: number; body: string; protocol: string }>((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          path: '/mutate-pod',
          method: 'POST',
          ca: ca.certPem,
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, protocol: res.httpVersion }));
        },
      );
      req.on('error', reject);
      req.end(review);
    });
    expect(h1).toMatchObject({ status: 200, protocol: '1.1' });
    expect(JSON.parse(h1.body)).toMatchObject({ response: { uid: 'u-1', allowed: true } });
  });

  it('keeps an HTTP/1.1 connection for many reviews, announced for longer than the apiserver keeps it idle', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = await connectionsSoFar();
      const answers = [await postH1(agent), await postH1(agent), await postH1(agent)];
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(new Set(answers.map((a) => a.socket)).size, 'one connection').toBe(1);
      expect(await connectionsSoFar(), 'one TLS handshake').toBe(before + 1);
      // client-go's transport drops idle connections after 90 s; the server must not drop them first.
      const timeout = Number(/timeout=(\d+)/.exec(answers[0]!.keepAlive ?? '')?.[1]);
      expect(timeout).toBeGreaterThan(90);
    } finally {
      agent.destroy();
    }
  });

  it('sends open HTTP/2 sessions away when the certificate changes; the next connection gets the new one', async () => {
    const first = http2.connect(`https://127.0.0.1:${port}`, { ca: ca.certPem });
    try {
      expect((await postH2(first)).status).toBe(200);
      const oldSerial = serialOf(first);
      const goaway = new Promise<void>((resolve) => first.once('goaway', () => resolve()));
      server.setTls(await createServingCert(ca, ['127.0.0.1'], Date.now(), HOUR));
      await goaway;
      const second = http2.connect(`https://127.0.0.1:${port}`, { ca: ca.certPem });
      try {
        expect((await postH2(second)).status).toBe(200);
        expect(serialOf(second)).not.toBe(oldSerial);
      } finally {
        second.close();
      }
    } finally {
      first.close();
    }
  });
});
