/**
 * The webhook's HTTPS server on its own (no cluster): it answers over HTTP/2 (the apiserver's
 * choice for loopback URLs only) and over HTTP/1.1, which the apiserver uses for a Service or any
 * other URL and whose connections the server keeps longer than the apiserver's idle pool does; a
 * new serving certificate sends open HTTP/2 sessions away so the next connection presents it, and
 * leaves them open for the client to close (closing them itself only after a grace period).
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

describe('webhook HTTPS server rotating under a busy HTTP/2 client', () => {
  const GRACE_MS = 1_000;
  let busy: WebhookServer;
  let busyPort: number;
  let busyCa: { certPem: string; keyPem: string };
  let entered = false;
  let release: () => void = () => undefined;
  beforeAll(async () => {
    busyCa = await createCa('busy-ca', Date.now(), HOUR);
    busy = new WebhookServer({ host: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }), drainGraceMs: GRACE_MS });
    busy.handle('/mutate-pod', async () => {
      entered = true;
      await new Promise<void>((resolve) => (release = resolve));
      return allow();
    });
    busy.setTls(await createServingCert(busyCa, ['127.0.0.1'], Date.now(), HOUR));
    busyPort = await busy.listen();
  });
  afterAll(async () => {
    await busy?.close();
  });

  it('answers the request in flight and leaves the connection open for the client to close, closing it only after the grace period', async () => {
    const client = http2.connect(`https://127.0.0.1:${busyPort}`, { ca: busyCa.certPem });
    // Node's client closes its side as soon as it reads a GOAWAY and its streams end; Go's does too,
    // but a client still writing a request it sent before reading the GOAWAY (the apiserver under
    // load) has not yet, which is the case that matters: the server must leave it the time to.
    client.close = () => client;
    client.on('error', () => undefined);
    try {
      const inFlight = postH2(client);
      for (let i = 0; i < 200 && !entered; i++) await sleep(10);
      expect(entered, 'the request reached the handler before the rotation').toBe(true);
      const goaway = new Promise<number>((resolve) => client.once('goaway', (code: number) => resolve(code)));
      busy.setTls(await createServingCert(busyCa, ['127.0.0.1'], Date.now(), HOUR));
      expect(await goaway, 'GOAWAY with NO_ERROR').toBe(http2.constants.NGHTTP2_NO_ERROR);
      release();
      const answer = await inFlight;
      const answeredAt = Date.now();
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ response: { uid: 'u-1', allowed: true } });
      await sleep(GRACE_MS / 3);
      expect(busy.openSessions(), 'the server must not close the connection as soon as its streams end').toBe(1);
      for (let i = 0; i < 300 && busy.openSessions() > 0; i++) await sleep(10);
      expect(busy.openSessions(), 'closed by the server after the grace period').toBe(0);
      expect(Date.now() - answeredAt).toBeGreaterThanOrEqual(GRACE_MS / 2);
    } finally {
      client.destroy();
    }
  });
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
