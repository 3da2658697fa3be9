import { pino } from 'pino';
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { HealthServer } from './health.js';

const silent = pino({ level: 'silent' });

describe('HealthServer', () => {
  let server: HealthServer | undefined;
  afterEach(async () => {
    await server?.close();
  });

  async function start(configure: (s: HealthServer) => void = () => {}) {
    const registry = new Registry();
    new Counter({ name: 'test_total', help: 'a test counter', registers: [registry] }).inc(2);
    server = new HealthServer({ port: 0, host: '127.0.0.1', registry, logger: silent, checkTimeoutMs: 200 });
    configure(server);
    const port = await server.start();
    expect(server.port()).toBe(port);
    const get = async (path: string, method = 'GET') => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { method });
      return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
    };
    return { get, port };
  }

  it('answers ok when every check passes, 503 naming the failing ones otherwise', async () => {
    let synced = false;
    const { get } = await start((s) => {
      s.addLivenessCheck('ping', () => true);
      s.addReadinessCheck('informers', () => synced);
      s.addReadinessCheck('webhook', () => Promise.resolve(true));
    });
    expect(await get('/healthz')).toMatchObject({ status: 200, body: 'ok\n' });
    const notReady = await get('/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toContain('[-]informers failed: not ready');
    expect(notReady.body).not.toContain('webhook');
    synced = true;
    expect(await get('/readyz')).toMatchObject({ status: 200, body: 'ok\n' });
    expect((await get('/readyz?verbose')).body).toBe('[+]informers ok\n[+]webhook ok\nok\n');
  });

  it('reports throwing and hanging checks as failed with their reason', async () => {
    const { get } = await start((s) => {
      s.addReadinessCheck('throws', () => {
        throw new Error('cache broken');
      });
      s.addReadinessCheck('hangs', () => new Promise<boolean>(() => {}));
    });
    const res = await get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body).toContain('[-]throws failed: cache broken');
    expect(res.body).toContain('[-]hangs failed: no answer within 200 ms');
  });

  it('serves the injected registry on /metrics and refuses other paths and methods', async () => {
    const { get } = await start();
    const metrics = await get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.type).toContain('text/plain');
    expect(metrics.body).toContain('test_total 2');
    expect((await get('/nope')).status).toBe(404);
    expect((await get('/healthz', 'POST')).status).toBe(405);
  });

  it('fails to start with a coded error when the port is taken', async () => {
    const { port } = await start();
    const other = new HealthServer({ port, host: '127.0.0.1', registry: new Registry(), logger: silent });
    await expect(other.start()).rejects.toMatchObject({ code: 'AGENT_ERR_HEALTH_SERVER' });
  });
});
