import { describe, expect, it } from 'vitest';
import type { AgentCredentials } from '@flotilla/api';
import { KubeApiError } from '../errors.js';
import type { KubeRequest, KubeRest } from '../runtime/rest.js';
import { secretCredentialStore } from './secret-store.js';

/** One Secret held in memory with resourceVersion checks, like the apiserver. */
function fakeRest(): { rest: KubeRest; stored: () => Record<string, unknown> | undefined; requests: KubeRequest[] } {
  let secret: { metadata: { resourceVersion: string }; data: Record<string, string> } | undefined;
  let rv = 0;
  const requests: KubeRequest[] = [];
  const rest: KubeRest = {
    request<T>(req: KubeRequest): Promise<T> {
      requests.push(req);
      const body = req.body as { metadata: { resourceVersion?: string }; data: Record<string, string> } | undefined;
      if (req.method === 'GET') {
        if (!secret) return Promise.reject(new KubeApiError(404, 'not found'));
        return Promise.resolve(structuredClone(secret) as T);
      }
      if (req.method === 'POST' && secret) return Promise.reject(new KubeApiError(409, 'exists'));
      if (req.method === 'PUT' && body?.metadata.resourceVersion !== secret?.metadata.resourceVersion) {
        return Promise.reject(new KubeApiError(409, 'conflict'));
      }
      secret = { metadata: { resourceVersion: String(++rv) }, data: body!.data };
      return Promise.resolve(structuredClone(secret) as T);
    },
  };
  return { rest, stored: () => secret?.data, requests };
}

const creds: AgentCredentials = {
  cluster: 'c1',
  nats: {
    servers: ['nats://n:4222'],
    jwt: 'eyJ.agent-c1.jwt',
    expiresAt: '2026-01-02T00:00:00.000Z',
    inboxPrefix: '_INBOX_c1',
    apiPrefix: 'flotilla.js',
    desiredStream: 'DESIRED',
    consumer: 'agent-c1',
  },
};

describe('secretCredentialStore', () => {
  it('starts empty, then keeps the registration secret and the credentials across stores', async () => {
    const f = fakeRest();
    const store = secretCredentialStore(f.rest, 'agents', 'join');
    expect(await store.load()).toBeUndefined();
    await store.save({ registrationSecret: 'reg' });
    await store.save({ seed: 'SUSEED', registrationSecret: 'reg', credentials: creds });
    expect(f.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'PUT']);
    expect(f.requests[1]!.path).toBe('/api/v1/namespaces/agents/secrets');
    const again = secretCredentialStore(f.rest, 'agents', 'join');
    expect(await again.load()).toEqual({ seed: 'SUSEED', registrationSecret: 'reg', credentials: creds });
    expect(Buffer.from(String(f.stored()?.['credentials']), 'base64').toString()).toContain('agent-c1');
  });

  it('fails a write that would overwrite another writer, naming the Secret and not its data', async () => {
    const f = fakeRest();
    const a = secretCredentialStore(f.rest, 'agents', 'join');
    const b = secretCredentialStore(f.rest, 'agents', 'join');
    await a.load();
    await b.load();
    await a.save({ registrationSecret: 'first' });
    const err = await b.save({ registrationSecret: 'second-secret' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AGENT_ERR_JOIN_SECRET', message: 'cannot write Secret agents/join' });
    expect(String((err as Error).message)).not.toContain('second-secret');
  });

  it('ignores credentials it cannot read', async () => {
    const f = fakeRest();
    const store = secretCredentialStore(f.rest, 'agents', 'join');
    await store.save({ registrationSecret: 'reg' });
    f.stored()!['credentials'] = Buffer.from('{"cluster":1}').toString('base64');
    expect(await store.load()).toEqual({ registrationSecret: 'reg' });
  });
});
