import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentError, KubeApiError } from '../errors.js';
import { createKubeRest, type KubeRestClient, type KubeRestOptions } from './rest.js';

interface Seen {
  method: string;
  url: string;
  body: string;
  socket: Socket;
  headers: http.IncomingHttpHeaders;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => void;

const ok: Handler = (req, res) => {
  if (req.url?.includes('missing')) {
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', reason: 'NotFound', message: 'pods "missing" not found' }));
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ ok: true }));
};

const servers: http.Server[] = [];
const clients: KubeRestClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A plain-HTTP "apiserver" recording every request, and a client of it. */
async function server(
  handler: Handler = ok,
  options: KubeRestOptions = {},
): Promise<{ rest: KubeRestClient; seen: Seen[]; connections: () => number }> {
  const seen: Seen[] = [];
  let connections = 0;
  const s = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const entry = { method: req.method!, url: req.url!, body, socket: req.socket, headers: req.headers };
      seen.push(entry);
      handler(req, res, entry);
    });
  });
  s.on('connection', () => connections++);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'secret' }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  const rest = createKubeRest(kc, options);
  clients.push(rest);
  return { rest, seen, connections: () => connections };
}

describe('createKubeRest', () => {
  it('sends the token, the query and a DELETE body with its length, so a kept-alive connection stays in sync', async () => {
    const { rest, seen } = await server();
    await rest.request({
      method: 'DELETE',
      path: '/api/v1/namespaces/ns/pods/a',
      body: { preconditions: { uid: 'u1' } },
    });
    await rest.request({ method: 'GET', path: '/api/v1/namespaces/ns/pods/b', query: { x: 1, y: undefined } });
    expect(seen[0]).toMatchObject({ method: 'DELETE', body: '{"preconditions":{"uid":"u1"}}' });
    expect(seen[0]!.headers.authorization).toBe('Bearer secret');
    expect(seen[1]).toMatchObject({ method: 'GET', url: '/api/v1/namespaces/ns/pods/b?x=1' });
  });

  it('turns a Status answer into a KubeApiError with the status and reason', async () => {
    const { rest } = await server();
    const err: unknown = await rest
      .request({ method: 'GET', path: '/api/v1/namespaces/ns/pods/missing' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ status: 404, reason: 'NotFound' });
    expect((err as Error).message).toContain('pods "missing" not found');
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

  it('reuses one connection for requests made one after another', async () => {
    const { rest, seen, connections } = await server();
    for (let i = 0; i < 5; i++) await rest.request({ method: 'POST', path: '/api/v1/namespaces/ns/pods', body: { i } });
    expect(seen).toHaveLength(5);
    expect(new Set(seen.map((s) => s.socket)).size).toBe(1);
    expect(connections()).toBe(1);
  });

  it('opens at most maxSockets connections however many requests are in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const slow: Handler = (req, res) => {
      most = Math.max(most, ++inFlight);
      setTimeout(() => {
        inFlight--;
        ok(req, res, undefined as never);
      }, 20);
    };
    const { rest, seen, connections } = await server(slow, { maxSockets: 4 });
    await Promise.all(Array.from({ length: 20 }, (_, i) => rest.request({ method: 'GET', path: `/p/${i}` })));
    expect(seen).toHaveLength(20);
    expect(most).toBe(4);
    expect(connections()).toBe(4);
  });

  /**
   * The race a keep-alive client must survive: the server closes an idle connection just as the
   * client sends on it. Here the server drops the reused connection of the second request without
   * answering (the client sees ECONNRESET on a reused socket, nothing answered).
   */
  function dropsSecondRequest(): Handler {
    let n = 0;
    return (req, res, seen) => {
      if (++n === 2) seen.socket.destroy();
      else ok(req, res, seen);
    };
  }

  it('sends an idempotent request again on a fresh connection when the reused one was dropped', async () => {
    const { rest, seen, connections } = await server(dropsSecondRequest());
    await rest.request({ method: 'GET', path: '/a' });
    await expect(rest.request({ method: 'GET', path: '/b' })).resolves.toEqual({ ok: true });
    expect(seen.map((s) => s.url)).toEqual(['/a', '/b', '/b']);
    expect(connections()).toBe(2);
  });

  it('never sends a POST twice: a dropped reused connection is an error', async () => {
    const { rest, seen } = await server(dropsSecondRequest());
    await rest.request({ method: 'POST', path: '/a', body: {} });
    const err: unknown = await rest.request({ method: 'POST', path: '/b', body: {} }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AGENT_ERR_KUBE_API' });
    expect((err as Error).message).toMatch(/^POST \/b: /);
    expect(seen.map((s) => s.url)).toEqual(['/a', '/b']);
  });

  it('times out a request that gets no answer, with a coded error naming it', async () => {
    const { rest } = await server(() => undefined, { timeoutMs: 100 });
    const err: unknown = await rest.request({ method: 'GET', path: '/hang' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect(err).toMatchObject({ code: 'AGENT_ERR_KUBE_API' });
    expect((err as Error).message).toMatch(/GET \/hang: no answer within 100 ms/);
    expect((err as Error).cause).toBeInstanceOf(Error);
  });

  it('close() ends idle connections; the next request opens a new one', async () => {
    const { rest, seen, connections } = await server();
    await rest.request({ method: 'GET', path: '/a' });
    rest.close();
    await rest.request({ method: 'GET', path: '/b' });
    expect(connections()).toBe(2);
    expect(seen[0]!.socket).not.toBe(seen[1]!.socket);
  });
});

describe('createKubeRest stream', () => {
  /** A watch-like handler: writes `parts` with a pause between them, then ends (or hangs). */
  function streaming(parts: string[], opts: { pauseMs?: number; end?: boolean } = {}): Handler {
    return (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      let i = 0;
      const next = (): void => {
        if (i < parts.length) {
          res.write(parts[i++]);
          setTimeout(next, opts.pauseMs ?? 5);
        } else if (opts.end ?? true) res.end();
      };
      next();
    };
  }

  const collect = (): { chunks: Buffer[]; text: () => string } => {
    const chunks: Buffer[] = [];
    return { chunks, text: () => Buffer.concat(chunks).toString('utf8') };
  };

  it('hands the body over chunk by chunk and resolves done at its end', async () => {
    const { rest, seen } = await server(streaming(['{"a":1}\n{"b"', ':2}\n']));
    const got = collect();
    const s = await rest.stream(
      { method: 'GET', path: '/api/v1/pods', query: { watch: true } },
      (c) => void got.chunks.push(c),
    );
    await s.done;
    expect(got.text()).toBe('{"a":1}\n{"b":2}\n');
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/api/v1/pods?watch=true' });
    expect(seen[0]!.headers.authorization).toBe('Bearer secret');
  });

  it('keeps a stream open that is silent for longer than the request and idle timeouts', async () => {
    const { rest } = await server(streaming(['x', 'y'], { pauseMs: 300 }), { timeoutMs: 100, idleTimeoutMs: 100 });
    const got = collect();
    const s = await rest.stream({ method: 'GET', path: '/w' }, (c) => void got.chunks.push(c));
    await s.done;
    expect(got.text()).toBe('xy');
  });

  it('reuses the connection of an ended stream for the next one, apart from the request connections', async () => {
    const { rest, seen, connections } = await server(streaming(['{}\n']));
    await (
      await rest.stream({ method: 'GET', path: '/w1' }, () => undefined)
    ).done;
    await (
      await rest.stream({ method: 'GET', path: '/w2' }, () => undefined)
    ).done;
    expect(seen[0]!.socket).toBe(seen[1]!.socket);
    await rest.request({ method: 'GET', path: '/other' });
    expect(connections()).toBe(2);
  });

  it('abort() closes a stream that would never end and resolves done', async () => {
    const { rest } = await server(streaming(['{}\n'], { end: false }));
    let first!: () => void;
    const arrived = new Promise<void>((r) => (first = r));
    const s = await rest.stream({ method: 'GET', path: '/w' }, () => first());
    await arrived;
    s.abort();
    await expect(s.done).resolves.toBeUndefined();
  });

  it('rejects done with what onChunk throws and closes the stream', async () => {
    const { rest } = await server(streaming(['a', 'b'], { end: false }));
    const s = await rest.stream({ method: 'GET', path: '/w' }, () => {
      throw new AgentError('AGENT_ERR_WATCH', 'bad line');
    });
    await expect(s.done).rejects.toMatchObject({ code: 'AGENT_ERR_WATCH', message: 'bad line' });
  });

  it('rejects done when the connection breaks before the body ended', async () => {
    const { rest } = await server((_req, res, seen) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"partial":');
      setTimeout(() => seen.socket.destroy(), 20);
    });
    const s = await rest.stream({ method: 'GET', path: '/w' }, () => undefined);
    await expect(s.done).rejects.toMatchObject({ code: 'AGENT_ERR_KUBE_API' });
  });

  it('rejects with a KubeApiError for a Status answer', async () => {
    const { rest } = await server((_req, res) => {
      res.writeHead(410, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', reason: 'Expired', message: 'too old resource version' }));
    });
    const err: unknown = await rest.stream({ method: 'GET', path: '/w' }, () => undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ status: 410, reason: 'Expired' });
  });
});
