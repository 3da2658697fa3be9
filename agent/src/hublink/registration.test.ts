import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { SIGNATURE_HEADER, newAgentKey, verifySignedRequest, type AgentCredentials } from '@flotilla/api';
import { joinFleet, memoryCredentialStore, type JoinOptions } from './registration.js';

const creds: AgentCredentials = {
  cluster: 'c1',
  nats: {
    servers: ['nats://n'],
    jwt: 'eyJ.user.jwt',
    expiresAt: '2026-01-02T00:00:00.000Z',
    inboxPrefix: '_I',
    apiPrefix: 'flotilla.js',
    desiredStream: 'D',
    consumer: 'agent-c1',
  },
};

/** A hub that accepts the cluster after `pendingClaims` refused claims. */
function fakeHub(pendingClaims: number): { fetch: typeof fetch; calls: string[] } {
  const calls: string[] = [];
  let claims = 0;
  const reply = (status: number, body: unknown): Response =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const f = (url: string): Promise<Response> => {
    const path = new URL(url).pathname;
    calls.push(path);
    if (path.endsWith('/register')) return Promise.resolve(reply(201, { registrationSecret: 'reg' }));
    if (claims++ < pendingClaims) {
      return Promise.resolve(reply(409, { error: { code: 'HUB_ERR_CLUSTER_NOT_ACCEPTED' } }));
    }
    return Promise.resolve(reply(200, creds));
  };
  return { fetch: f as unknown as typeof fetch, calls };
}

const base = (o: Partial<JoinOptions>): JoinOptions => ({
  hubUrl: 'http://hub/',
  bootstrapToken: 'boot',
  clusterName: 'c1',
  labels: {},
  agentVersion: '0',
  kubernetesVersion: 'v1',
  store: memoryCredentialStore(),
  logger: pino({ level: 'silent' }),
  pollIntervalMs: 1,
  ...o,
});

describe('joinFleet', () => {
  it('registers once, polls until accepted, stores the credentials, and leaves no abort listeners', async () => {
    const hub = fakeHub(3);
    const key = newAgentKey();
    const store = memoryCredentialStore({ seed: key.seed });
    const abort = new AbortController();
    const joined = { ...creds, seed: key.seed };
    expect(await joinFleet(base({ fetch: hub.fetch, store, signal: abort.signal }))).toEqual(joined);
    expect(hub.calls).toEqual(['/api/v1/clusters/register', ...Array<string>(4).fill('/api/v1/clusters/c1/claim')]);
    expect(await store.load()).toEqual({ seed: key.seed, registrationSecret: 'reg', credentials: creds });
    expect(getEventListeners(abort.signal, 'abort')).toHaveLength(0);
    // Joined: no request at all the next time.
    expect(await joinFleet(base({ fetch: hub.fetch, store }))).toEqual(joined);
    expect(hub.calls).toHaveLength(5);
  });

  it('creates its key once, sends only the public key, and signs the claim with it', async () => {
    const sent: { path: string; headers: Record<string, string>; body: string }[] = [];
    const f = (url: string, init: RequestInit): Promise<Response> => {
      const path = new URL(url).pathname;
      sent.push({ path, headers: init.headers as Record<string, string>, body: init.body as string });
      const body = path.endsWith('/register') ? { registrationSecret: 'reg' } : creds;
      return Promise.resolve(new Response(JSON.stringify(body), { status: path.endsWith('/register') ? 201 : 200 }));
    };
    const store = memoryCredentialStore();
    const joined = await joinFleet(base({ fetch: f, store }));
    const { seed } = (await store.load())!;
    expect(joined.seed).toBe(seed);
    const publicKey = (JSON.parse(sent[0]!.body) as { publicKey: string }).publicKey;
    expect(publicKey).toMatch(/^U/);
    for (const r of sent) expect(r.body).not.toContain(seed);
    const claim = sent[1]!;
    const check = verifySignedRequest(
      claim.headers[SIGNATURE_HEADER],
      { method: 'POST', path: claim.path, body: JSON.parse(claim.body) },
      { publicKey, lastTs: 0, now: Date.now() },
    );
    expect(check.ok).toBe(true);
  });

  it('resumes a pending registration without registering again', async () => {
    const hub = fakeHub(0);
    await joinFleet(base({ fetch: hub.fetch, store: memoryCredentialStore({ registrationSecret: 'reg' }) }));
    expect(hub.calls).toEqual(['/api/v1/clusters/c1/claim']);
  });

  it('stops waiting when aborted', async () => {
    const abort = new AbortController();
    const joining = joinFleet(base({ fetch: fakeHub(1_000_000).fetch, signal: abort.signal, pollIntervalMs: 60_000 }));
    setTimeout(() => abort.abort(), 20);
    await expect(joining).rejects.toMatchObject({ code: 'AGENT_ERR_HUB_JOIN_ABORTED' });
  });

  it('forgets a registration the hub refuses, and registers again on the next attempt', async () => {
    const store = memoryCredentialStore({ registrationSecret: 'expired' });
    const calls: string[] = [];
    const reply = (status: number, body: unknown): Response =>
      new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    const f = (url: string, init: RequestInit): Promise<Response> => {
      const path = new URL(url).pathname;
      calls.push(path);
      if (path.endsWith('/register')) return Promise.resolve(reply(201, { registrationSecret: 'fresh' }));
      const { registrationSecret } = JSON.parse(init.body as string) as { registrationSecret: string };
      return Promise.resolve(
        registrationSecret === 'fresh'
          ? reply(200, creds)
          : reply(403, { error: { code: 'HUB_ERR_REGISTRATION_REFUSED' } }),
      );
    };
    const hub = f as unknown as typeof fetch;
    await expect(joinFleet(base({ fetch: hub, store }))).rejects.toMatchObject({
      code: 'AGENT_ERR_HUB_JOIN',
      hubCode: 'HUB_ERR_REGISTRATION_REFUSED',
    });
    const { seed } = (await store.load())!;
    expect(await store.load()).toEqual({ seed });
    expect(await joinFleet(base({ fetch: hub, store }))).toEqual({ ...creds, seed });
    expect(calls).toEqual(['/api/v1/clusters/c1/claim', '/api/v1/clusters/register', '/api/v1/clusters/c1/claim']);
  });
});
