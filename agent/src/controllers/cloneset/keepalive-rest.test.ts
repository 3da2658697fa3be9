import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeApiError } from '../../errors.js';
import { keepAliveKubeRest } from './keepalive-rest.js';

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

interface Seen {
  method: string;
  url: string;
  body: string;
  socket: unknown;
  headers: http.IncomingHttpHeaders;
}

async function server(): Promise<{ kc: KubeConfig; seen: Seen[] }> {
  const seen: Seen[] = [];
  const s = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, body, socket: req.socket, headers: req.headers });
      if (req.url?.includes('missing')) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', reason: 'NotFound', message: 'pods "missing" not found' }));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    });
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'secret' }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return { kc, seen };
}

describe('keepAliveKubeRest', () => {
  it('sends a DELETE body with its length, so a kept-alive connection stays in sync', async () => {
    const { kc, seen } = await server();
    const rest = keepAliveKubeRest(kc);
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
    const { kc } = await server();
    const err: unknown = await keepAliveKubeRest(kc)
      .request({ method: 'GET', path: '/api/v1/namespaces/ns/pods/missing' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ status: 404, reason: 'NotFound' });
    expect((err as Error).message).toContain('pods "missing" not found');
  });
});
