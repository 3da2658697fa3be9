import { newAgentKey } from '@flotilla/api';
import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { KEY_REFUSED, createCredentialHealth, createCredentialRenewal, renewalDelayMs } from './credential-renewal.js';
import { createHubLinkMetrics } from './metrics.js';
import { memoryCredentialStore } from './registration.js';
import { createLinkTlsHealth } from './tls.js';

const jwtWith = (claims: Record<string, number>): string =>
  `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;

describe('renewalDelayMs', () => {
  it('renews at 2/3 of the lifetime, at once when that has passed', () => {
    const iat = 1_000_000;
    const jwt = jwtWith({ iat, exp: iat + 3 * 3600 });
    expect(renewalDelayMs(jwt, iat * 1000)).toBe(2 * 3600_000);
    expect(renewalDelayMs(jwt, (iat + 2 * 3600) * 1000)).toBe(0);
    expect(renewalDelayMs(jwt, (iat + 4 * 3600) * 1000)).toBe(0);
  });

  it('looks again within 6 hours for a long-lived JWT', () => {
    const iat = 1_000_000;
    expect(renewalDelayMs(jwtWith({ iat, exp: iat + 30 * 86_400 }), iat * 1000)).toBe(6 * 3600_000);
  });
});

describe('createCredentialRenewal', () => {
  const expired = jwtWith({ iat: 1, exp: 2 });
  const setup = (answer: () => Promise<Response>) => {
    const registry = new Registry();
    const metrics = createHubLinkMetrics(registry);
    const calls: string[] = [];
    const credentials = {
      servers: [],
      jwt: expired,
      seed: newAgentKey().seed,
      inboxPrefix: '_I',
      apiPrefix: 'p',
      desiredStream: 'D',
      consumer: 'c',
    };
    const store = memoryCredentialStore({});
    const tls = createLinkTlsHealth({ logger: pino({ level: 'silent' }), metrics });
    const renewal = createCredentialRenewal({
      hubUrl: 'https://hub.example',
      fetch: (input) => {
        calls.push(input);
        return answer();
      },
      clusterName: 'c1',
      store,
      credentials,
      logger: pino({ level: 'silent' }),
      metrics,
      tls,
    });
    const health = createCredentialHealth();
    health.track(renewal);
    return { registry, calls, credentials, store, renewal, health, tls };
  };
  const counted = async (registry: Registry, result: string): Promise<number> =>
    (await registry.getSingleMetric('flotilla_agent_hublink_credential_renewals_total')!.get()).values.find(
      (v) => v.labels['result'] === result,
    )?.value ?? 0;

  it('renews a JWT that expired already, at once, and saves it', async () => {
    const fresh = jwtWith({ iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 3600 });
    const body = { cluster: 'c1', nats: { jwt: fresh, expiresAt: new Date().toISOString() } };
    const s = setup(() => Promise.resolve(Response.json(body)));
    s.renewal.start();
    await vi.waitFor(() => expect(s.credentials.jwt).toBe(fresh));
    s.renewal.stop();
    expect(s.calls).toEqual(['https://hub.example/api/v1/clusters/c1/credentials/renew']);
    expect((await s.store.load())?.credentials?.nats.jwt).toBe(fresh);
    expect(await counted(s.registry, 'renewed')).toBe(1);
    expect(s.health.check()).toBe(true);
  });

  it('a refused key: not ready with the reason, counted, and NATS refusals do not hurry the backoff', async () => {
    const s = setup(() => Promise.resolve(Response.json({ error: { code: 'HUB_ERR_FORBIDDEN' } }, { status: 403 })));
    s.renewal.start();
    await vi.waitFor(() => expect(s.renewal.ready()).toBe(false));
    expect(() => s.health.check()).toThrow(KEY_REFUSED);
    expect(await counted(s.registry, 'refused')).toBe(1);
    s.renewal.renewNow('refused');
    s.renewal.renewNow('expired');
    await new Promise((r) => setTimeout(r, 50));
    expect(s.calls).toHaveLength(1);
    s.renewal.stop();
  });

  it('a refusal stands while the hub is unreachable afterwards', async () => {
    let n = 0;
    const s = setup(() =>
      n++ === 0
        ? Promise.resolve(Response.json({ error: { code: 'HUB_ERR_FORBIDDEN' } }, { status: 403 }))
        : Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })),
    );
    s.renewal.start();
    await vi.waitFor(() => expect(s.calls).toHaveLength(2), { timeout: 4000 });
    await vi.waitFor(async () => expect(await counted(s.registry, 'failed')).toBe(1));
    s.renewal.stop();
    expect(s.renewal.ready()).toBe(false);
  });

  it('a hub certificate that does not verify goes to the TLS health; the renewal is retried', async () => {
    const certFailure = new TypeError('fetch failed', {
      cause: Object.assign(new Error('self-signed certificate in certificate chain'), {
        code: 'SELF_SIGNED_CERT_IN_CHAIN',
      }),
    });
    const s = setup(() => Promise.reject(certFailure));
    s.renewal.start();
    await vi.waitFor(() => expect(s.tls.ready()).toBe(false));
    expect(() => s.tls.check()).toThrow(/--hub-ca-file/);
    expect(s.renewal.ready()).toBe(true);
    expect(await counted(s.registry, 'failed')).toBe(1);
    s.renewal.stop();
  });
});
