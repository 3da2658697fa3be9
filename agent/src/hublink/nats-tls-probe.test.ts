import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { natsHostPort, watchNatsTls } from './nats-tls-probe.js';

const certError = Object.assign(new Error('unable to verify the first certificate'), {
  code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
});
const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

describe('natsHostPort', () => {
  it('reads tls://, nats:// and bare host:port URLs, IPv6 in brackets, 4222 by default', () => {
    expect(natsHostPort('tls://127.0.0.1:4333')).toEqual({ host: '127.0.0.1', port: 4333 });
    expect(natsHostPort('nats://nats.example')).toEqual({ host: 'nats.example', port: 4222 });
    expect(natsHostPort('10.0.0.1:5000')).toEqual({ host: '10.0.0.1', port: 5000 });
    expect(natsHostPort('tls://[::1]:4222')).toEqual({ host: '::1', port: 4222 });
  });
});

describe('watchNatsTls', () => {
  const setup = (answers: unknown[]) => {
    const observed: [string, unknown][] = [];
    const warnings: unknown[] = [];
    const logger = pino({ level: 'warn' }, { write: (l: string) => void warnings.push(JSON.parse(l)) });
    const watch = watchNatsTls({
      servers: ['tls://a:1', 'tls://b:2'],
      probe: (url) => Promise.resolve(answers[url === 'tls://a:1' ? 0 : 1]),
      tls: {
        observe: (peer, err) => {
          observed.push([peer, err]);
          return err !== undefined;
        },
      },
      logger,
      backoff: { initialMs: 5, maxMs: 20 },
    });
    return { watch, observed, warnings };
  };

  it('a certificate failure on a reconnect goes to the TLS health until the link is back', async () => {
    const s = setup([refused, certError]);
    s.watch.disconnected();
    await vi.waitFor(() => expect(s.observed.length).toBeGreaterThanOrEqual(2));
    expect(s.observed.slice(0, 2)).toEqual([
      ['nats', certError],
      ['nats', certError],
    ]);
    s.watch.reconnected();
    const seen = s.observed.length;
    expect(s.observed.at(-1)).toEqual(['nats', undefined]);
    await new Promise((r) => setTimeout(r, 50));
    expect(s.observed).toHaveLength(seen);
    expect(s.warnings).toEqual([]);
  });

  it('a network failure is not a TLS failure: said once per outage', async () => {
    const s = setup([refused, refused]);
    s.watch.disconnected();
    await vi.waitFor(() => expect(s.observed.length).toBeGreaterThanOrEqual(3));
    s.watch.stop();
    expect(s.observed.every(([, err]) => err === undefined)).toBe(true);
    expect(s.warnings).toEqual([
      expect.objectContaining({ msg: expect.stringContaining('the network, not a certificate') }),
    ]);
  });
});
