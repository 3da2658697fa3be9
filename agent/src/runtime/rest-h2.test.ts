import http2 from 'node:http2';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCa, createServingCert, type KeyPairPem } from '../webhook/certs/pki.js';
import { AgentError, KubeApiError } from '../errors.js';
import { createKubeRest, type KubeRestClient, type KubeRestOptions } from './rest.js';

interface Seen {
  method: string;
  url: string;
  body: string;
  httpVersion: string;
  session: http2.Http2Session | undefined;
  headers: http2.IncomingHttpHeaders;
}

type Handler = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse, seen: Seen) => void;

const ok: Handler = (req, res) => {
  if (req.url.includes('missing')) {
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', reason: 'NotFound', message: 'pods "missing" not found' }));
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ ok: true }));
};

let ca: KeyPairPem;
let serving: KeyPairPem;
let otherCa: KeyPairPem;
beforeAll(async () => {
  const now = Date.now();
  ca = await createCa('test-ca', now, 3_600_000);
  otherCa = await createCa('other-ca', now, 3_600_000);
  serving = await createServingCert(ca, ['127.0.0.1', 'localhost'], now, 3_600_000);
});

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

function kubeConfig(port: number, caPem: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(caPem).toString('base64') }],
    users: [{ name: 'u', token: 'secret' }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return kc;
}

/**
 * A TLS "apiserver" offering h2 (and HTTP/1.1 for clients that ask for it) recording every
 * request and the sessions it accepted, and a client of it.
 */
async function server(
  handler: Handler = ok,
  options: KubeRestOptions = {},
  settings: http2.Settings = {},
): Promise<{ rest: KubeRestClient; seen: Seen[]; sessions: http2.ServerHttp2Session[]; kc: KubeConfig; port: number }> {
  const seen: Seen[] = [];
  const sessions: http2.ServerHttp2Session[] = [];
  const s = http2.createSecureServer({ key: serving.keyPem, cert: serving.certPem, allowHTTP1: true, settings });
  s.on('request', (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const entry: Seen = {
        method: req.method,
        url: req.url,
        body,
        httpVersion: req.httpVersion,
        session: req.stream?.session,
        headers: req.headers,
      };
      seen.push(entry);
      handler(req, res, entry);
    });
  });
  s.on('session', (session) => sessions.push(session));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  closers.push(() => new Promise<void>((r) => s.close(() => r())));
  closers.push(() => sessions.forEach((x) => x.destroy()));
  const kc = kubeConfig(port, ca.certPem);
  const rest = createKubeRest(kc, options);
  closers.push(() => rest.close());
  return { rest, seen, sessions, kc, port };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('createKubeRest over HTTP/2', () => {
  it('sends every request in flight as a stream of one session, with the token, query and body', async () => {
    const { rest, seen, sessions } = await server((req, res, s) => setTimeout(() => ok(req, res, s), 20));
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        rest.request({ method: 'POST', path: '/api/v1/namespaces/ns/pods', query: { i }, body: { i } }),
      ),
    );
    await rest.request({
      method: 'DELETE',
      path: '/api/v1/namespaces/ns/pods/a',
      body: { preconditions: { uid: 'u' } },
    });
    expect(seen).toHaveLength(21);
    expect(sessions).toHaveLength(1);
    expect(new Set(seen.map((s) => s.httpVersion))).toEqual(new Set(['2.0']));
    expect(seen[0]!.headers.authorization).toBe('Bearer secret');
    expect(seen.map((s) => s.url)).toContain('/api/v1/namespaces/ns/pods?i=7');
    expect(seen.find((s) => s.url === '/api/v1/namespaces/ns/pods?i=7')!.body).toBe('{"i":7}');
    expect(seen[20]).toMatchObject({ method: 'DELETE', body: '{"preconditions":{"uid":"u"}}' });
  });

  it('turns a Status answer into a KubeApiError with the status and reason', async () => {
    const { rest } = await server();
    const err: unknown = await rest
      .request({ method: 'GET', path: '/api/v1/namespaces/ns/pods/missing' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ status: 404, reason: 'NotFound' });
  });

  it('with discardBody resolves undefined for a 2xx answer and still parses an error answer', async () => {
    const { rest } = await server();
    const path = '/api/v1/namespaces/ns/pods';
    expect(await rest.request({ method: 'POST', path, body: {}, discardBody: true })).toBeUndefined();
    expect(await rest.request({ method: 'POST', path, body: {} })).toEqual({ ok: true });
    const err: unknown = await rest
      .request({ method: 'POST', path: `${path}/missing`, body: {}, discardBody: true })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ status: 404, reason: 'NotFound', body: { kind: 'Status', reason: 'NotFound' } });
    expect((err as Error).message).toContain('pods "missing" not found');
  });

  it('opens another session only when every open one carries as many streams as the server allows', async () => {
    const { rest, seen, sessions } = await server(
      (req, res, s) => setTimeout(() => ok(req, res, s), 50),
      {},
      { maxConcurrentStreams: 4 },
    );
    // The first session learns the limit before the burst.
    await rest.request({ method: 'GET', path: '/warm' });
    await Promise.all(Array.from({ length: 12 }, (_, i) => rest.request({ method: 'GET', path: `/p/${i}` })));
    expect(seen).toHaveLength(13);
    expect(sessions).toHaveLength(3);
  });

  it('sends a request the server refused unprocessed (REFUSED_STREAM) again, even a POST', async () => {
    let n = 0;
    const { rest, seen } = await server((req, res, s) => {
      if (++n === 1) req.stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      else ok(req, res, s);
    });
    await expect(rest.request({ method: 'POST', path: '/a', body: {} })).resolves.toEqual({ ok: true });
    expect(seen.map((s) => s.url)).toEqual(['/a', '/a']);
  });

  it('moves to a new session after a GOAWAY; streams above its last stream id are sent again', async () => {
    let n = 0;
    const { rest, seen, sessions } = await server((req, res, s) => {
      // The second request's session goes away without processing it (last stream id 1).
      if (++n === 2) req.stream.session!.goaway(http2.constants.NGHTTP2_NO_ERROR, 1);
      else ok(req, res, s);
    });
    await rest.request({ method: 'POST', path: '/a', body: {} });
    await expect(rest.request({ method: 'POST', path: '/b', body: {} })).resolves.toEqual({ ok: true });
    await rest.request({ method: 'POST', path: '/c', body: {} });
    expect(seen.map((s) => s.url)).toEqual(['/a', '/b', '/b', '/c']);
    expect(sessions).toHaveLength(2);
    expect(seen[2]!.session).toBe(seen[3]!.session);
  });

  /** The server drops the whole connection on the second request, without answering it. */
  function dropsSecondRequest(): Handler {
    let n = 0;
    return (req, res, seen) => {
      if (++n === 2) seen.session!.destroy();
      else ok(req, res, seen);
    };
  }

  it('sends an idempotent request again on a new session when the connection was lost before an answer', async () => {
    const { rest, seen, sessions } = await server(dropsSecondRequest());
    await rest.request({ method: 'GET', path: '/a' });
    await expect(rest.request({ method: 'GET', path: '/b' })).resolves.toEqual({ ok: true });
    expect(seen.map((s) => s.url)).toEqual(['/a', '/b', '/b']);
    expect(sessions).toHaveLength(2);
  });

  it('never sends a POST twice when the connection was lost after it was sent', async () => {
    const { rest, seen } = await server(dropsSecondRequest());
    await rest.request({ method: 'POST', path: '/a', body: {} });
    const err: unknown = await rest.request({ method: 'POST', path: '/b', body: {} }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AGENT_ERR_KUBE_API' });
    expect((err as Error).message).toMatch(/^POST \/b: /);
    expect(seen.map((s) => s.url)).toEqual(['/a', '/b']);
    // The next request gets a new session.
    await expect(rest.request({ method: 'POST', path: '/c', body: {} })).resolves.toEqual({ ok: true });
  });

  it('times out a request that gets no answer, with a coded error naming it', async () => {
    const { rest } = await server(() => undefined, { timeoutMs: 100 });
    const err: unknown = await rest.request({ method: 'GET', path: '/hang' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect(err).toMatchObject({ code: 'AGENT_ERR_KUBE_API' });
    expect((err as Error).message).toMatch(/GET \/hang: no answer within 100 ms/);
  });

  it('gives up a request when its AbortSignal fires', async () => {
    const { rest } = await server(() => undefined);
    const controller = new AbortController();
    const pending = rest.request({ method: 'GET', path: '/hang', signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ code: 'AGENT_ERR_KUBE_API' });
  });

  it('closes a session that does not answer a PING after a request timed out; the next request opens a new one', async () => {
    const { port, sessions } = await server();
    // A proxy that can stop forwarding: the connection stays open but nothing comes back.
    let frozen = false;
    const sockets: net.Socket[] = [];
    const proxy = net.createServer((client) => {
      const upstream = net.connect(port, '127.0.0.1');
      sockets.push(client, upstream);
      client.on('data', (d: Buffer) => void (frozen || upstream.write(d)));
      upstream.on('data', (d: Buffer) => void (frozen || client.write(d)));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('error', () => undefined);
      upstream.on('error', () => undefined);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => proxy.close(() => r())));
    closers.push(() => sockets.forEach((s) => s.destroy()));
    const rest = createKubeRest(kubeConfig((proxy.address() as AddressInfo).port, ca.certPem), {
      timeoutMs: 150,
      pingTimeoutMs: 150,
    });
    closers.push(() => rest.close());
    await rest.request({ method: 'GET', path: '/a' });
    frozen = true;
    await expect(rest.request({ method: 'GET', path: '/b' })).rejects.toThrow(/no answer within 150 ms/);
    await sleep(300);
    frozen = false;
    await expect(rest.request({ method: 'GET', path: '/c' })).resolves.toEqual({ ok: true });
    expect(sessions).toHaveLength(2);
  });

  it('closes an idle session after idleTimeoutMs', async () => {
    const { rest, sessions } = await server(ok, { idleTimeoutMs: 100 });
    await rest.request({ method: 'GET', path: '/a' });
    await sleep(300);
    expect(sessions[0]!.closed || sessions[0]!.destroyed).toBe(true);
    await rest.request({ method: 'GET', path: '/b' });
    expect(sessions).toHaveLength(2);
  });

  it('opens a new session when the TLS material of the kubeconfig changes', async () => {
    const { rest, kc, sessions, seen } = await server(ok, { tlsRefreshMs: 0 });
    await rest.request({ method: 'GET', path: '/a' });
    // A rotated CA bundle: the old CA plus a new one.
    const bundle = `${ca.certPem.trim()}\n${otherCa.certPem.trim()}\n`;
    (kc.clusters[0] as { caData?: string }).caData = Buffer.from(bundle).toString('base64');
    await rest.request({ method: 'GET', path: '/b' });
    expect(sessions).toHaveLength(2);
    expect(seen[0]!.session).not.toBe(seen[1]!.session);
  });

  it('keeps HTTP/1.1 keep-alive connections for a server that offers no h2', async () => {
    const sockets = new Set<unknown>();
    const s = https.createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
      sockets.add(req.socket);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ version: req.httpVersion }));
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => s.close(() => r())));
    closers.push(() => s.closeAllConnections());
    const rest = createKubeRest(kubeConfig((s.address() as AddressInfo).port, ca.certPem));
    closers.push(() => rest.close());
    for (const path of ['/a', '/b', '/c']) {
      await expect(rest.request({ method: 'POST', path, body: {} })).resolves.toEqual({ version: '1.1' });
    }
    // After one TLS connection that learnt h2 is not offered: one kept alive for the requests.
    expect(sockets.size).toBe(1);
  });

  it('uses HTTP/1.1 when http2 is off', async () => {
    const { rest, seen } = await server(ok, { http2: false });
    await rest.request({ method: 'GET', path: '/a' });
    expect(seen[0]!.httpVersion).toBe('1.1');
  });
});
