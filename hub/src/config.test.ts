import { describe, expect, it } from 'vitest';
import { DEFAULT_REST_LIMITS, DEFAULT_SYSTEM_NAMESPACES, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('applies defaults', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://x/y' });
    expect(c).toMatchObject({
      http: { host: '0.0.0.0', port: 8080, bodyLimitBytes: 1024 * 1024, tls: undefined },
      nats: {
        servers: ['nats://127.0.0.1:4222'],
        caFile: undefined,
        publicUrls: ['nats://127.0.0.1:4222'],
        replicas: 1,
      },
      natsAuth: undefined,
      heartbeatTimeoutMs: 30_000,
      outboxRetentionSeconds: 3600,
    });
    expect(loadConfig({ DATABASE_URL: 'x', FLOTILLA_OUTBOX_RETENTION_SECONDS: '86400' }).outboxRetentionSeconds).toBe(
      86_400,
    );
  });

  it.each([
    [{}, /DATABASE_URL must be set/],
    [{ DATABASE_URL: 'x', FLOTILLA_HUB_PORT: 'http' }, /FLOTILLA_HUB_PORT must be an integer/],
    [
      { DATABASE_URL: 'x', FLOTILLA_OUTBOX_RETENTION_SECONDS: '0' },
      /FLOTILLA_OUTBOX_RETENTION_SECONDS must be an integer/,
    ],
    [{ DATABASE_URL: 'x', FLOTILLA_ADMIN_TOKEN: 'short' }, /FLOTILLA_ADMIN_TOKEN must be at least 16/],
    [
      { DATABASE_URL: 'x', FLOTILLA_NATS_CREDS_FILE: '/s/hub.creds' },
      /FLOTILLA_NATS_SYSTEM_CREDS_FILE must be set too/,
    ],
    [{ DATABASE_URL: 'x', FLOTILLA_TLS_CERT_FILE: '/tls/hub.crt' }, /FLOTILLA_TLS_KEY_FILE must be set too/],
    [{ DATABASE_URL: 'x', FLOTILLA_TLS_KEY_FILE: '/tls/hub.key' }, /FLOTILLA_TLS_CERT_FILE must be set too/],
  ])('names the bad variable: %o', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reads the operator-mode files and the credential TTL', () => {
    const c = loadConfig({
      DATABASE_URL: 'x',
      FLOTILLA_NATS_CREDS_FILE: '/s/hub.creds',
      FLOTILLA_NATS_SYSTEM_CREDS_FILE: '/s/sys.creds',
      FLOTILLA_NATS_OPERATOR_SIGNING_KEY_FILE: '/s/operator.nk',
      FLOTILLA_NATS_ACCOUNT_SIGNING_KEY_FILE: '/s/account.nk',
      FLOTILLA_AGENT_CREDENTIAL_TTL_SECONDS: '3600',
      FLOTILLA_NATS_PUBLIC_URLS: 'nats://a:4222, nats://b:4222',
    });
    expect(c.natsAuth).toEqual({
      credsFile: '/s/hub.creds',
      systemCredsFile: '/s/sys.creds',
      operatorSigningKeyFile: '/s/operator.nk',
      accountSigningKeyFile: '/s/account.nk',
      credentialTtlSeconds: 3600,
    });
    expect(c.nats.publicUrls).toEqual(['nats://a:4222', 'nats://b:4222']);
  });

  it('reads a NATS cluster, its CA and the HTTPS certificate', () => {
    const c = loadConfig({
      DATABASE_URL: 'x',
      NATS_URL: 'tls://n1:4222, tls://n2:4222,tls://n3:4222',
      FLOTILLA_NATS_CA_FILE: '/tls/nats-ca.crt',
      FLOTILLA_NATS_REPLICAS: '3',
      FLOTILLA_TLS_CERT_FILE: '/tls/hub.crt',
      FLOTILLA_TLS_KEY_FILE: '/tls/hub.key',
    });
    expect(c.nats).toMatchObject({
      servers: ['tls://n1:4222', 'tls://n2:4222', 'tls://n3:4222'],
      caFile: '/tls/nats-ca.crt',
      publicUrls: ['tls://n1:4222', 'tls://n2:4222', 'tls://n3:4222'],
      replicas: 3,
      agentDurables: { memory: true, replicas: 3 },
      statusDurable: { memory: true, replicas: 3 },
    });
    expect(c.http.tls).toEqual({ certFile: '/tls/hub.crt', keyFile: '/tls/hub.key' });
  });

  it('keeps agent durables as told, no more replicated than the streams', () => {
    const c = loadConfig({
      DATABASE_URL: 'x',
      FLOTILLA_NATS_REPLICAS: '3',
      FLOTILLA_NATS_AGENT_DURABLE_STORAGE: 'memory',
      FLOTILLA_NATS_AGENT_DURABLE_REPLICAS: '1',
    });
    expect(c.nats.agentDurables).toEqual({ memory: true, replicas: 1 });
    expect(() => loadConfig({ DATABASE_URL: 'x', FLOTILLA_NATS_AGENT_DURABLE_STORAGE: 'disk' })).toThrow(
      /FLOTILLA_NATS_AGENT_DURABLE_STORAGE must be file or memory, not "disk"/,
    );
    expect(() => loadConfig({ DATABASE_URL: 'x', FLOTILLA_NATS_AGENT_DURABLE_REPLICAS: '3' })).toThrow(
      /FLOTILLA_NATS_AGENT_DURABLE_REPLICAS must be an integer between 1 and 1/,
    );
  });

  it("keeps the hub's status durable as told, no more replicated than the streams", () => {
    const c = loadConfig({
      DATABASE_URL: 'x',
      FLOTILLA_NATS_REPLICAS: '3',
      FLOTILLA_NATS_STATUS_DURABLE_STORAGE: 'file',
      FLOTILLA_NATS_STATUS_DURABLE_REPLICAS: '2',
    });
    expect(c.nats.statusDurable).toEqual({ memory: false, replicas: 2 });
    expect(c.nats.agentDurables).toEqual({ memory: true, replicas: 3 });
    expect(() => loadConfig({ DATABASE_URL: 'x', FLOTILLA_NATS_STATUS_DURABLE_STORAGE: 'Memory' })).toThrow(
      /FLOTILLA_NATS_STATUS_DURABLE_STORAGE must be file or memory, not "Memory"/,
    );
    expect(() => loadConfig({ DATABASE_URL: 'x', FLOTILLA_NATS_STATUS_DURABLE_REPLICAS: '0' })).toThrow(
      /FLOTILLA_NATS_STATUS_DURABLE_REPLICAS must be an integer between 1 and 1/,
    );
  });

  it('bounds both streams, the desired messages by the largest manifest the API accepts', () => {
    const c = loadConfig({ DATABASE_URL: 'x', FLOTILLA_HUB_BODY_LIMIT_BYTES: '2097152' });
    expect(c.streams).toEqual({
      desired: { maxBytes: 1024 ** 3, maxMsgs: 1_000_000, maxMsgSize: 2 * 1024 ** 2 + 64 * 1024 },
      status: { maxBytes: 256 * 1024 ** 2, maxMsgs: 1_000_000, maxMsgSize: 8 * 1024 },
    });
    expect(c.natsReconcileMs).toBe(30_000);
    const set = loadConfig({
      DATABASE_URL: 'x',
      FLOTILLA_STATUS_STREAM_MAX_MSG_SIZE: '4096',
      FLOTILLA_STATUS_STREAM_MAX_MSGS: '5000',
      FLOTILLA_DESIRED_STREAM_MAX_BYTES: '104857600',
      FLOTILLA_NATS_RECONCILE_SECONDS: '5',
    });
    expect(set.streams.status).toMatchObject({ maxMsgSize: 4096, maxMsgs: 5000 });
    expect(set.streams.desired.maxBytes).toBe(100 * 1024 ** 2);
    expect(set.natsReconcileMs).toBe(5000);
  });

  it.each([
    [
      { FLOTILLA_DESIRED_STREAM_MAX_MSG_SIZE: '1048576' },
      /FLOTILLA_DESIRED_STREAM_MAX_MSG_SIZE must be at least FLOTILLA_HUB_BODY_LIMIT_BYTES/,
    ],
    [{ FLOTILLA_STATUS_STREAM_MAX_MSG_SIZE: '10' }, /FLOTILLA_STATUS_STREAM_MAX_MSG_SIZE must be an integer/],
    [{ FLOTILLA_STATUS_STREAM_MAX_MSGS: '-1' }, /FLOTILLA_STATUS_STREAM_MAX_MSGS must be an integer/],
    [
      { FLOTILLA_DESIRED_STREAM_MAX_BYTES: '1048576' },
      /FLOTILLA_DESIRED_STREAM_MAX_BYTES must be at least FLOTILLA_DESIRED_STREAM_MAX_MSG_SIZE/,
    ],
    [{ FLOTILLA_NATS_RECONCILE_SECONDS: '0' }, /FLOTILLA_NATS_RECONCILE_SECONDS must be an integer/],
  ])('refuses stream limits that cannot work: %o', (env, message) => {
    expect(() => loadConfig({ DATABASE_URL: 'x', ...env })).toThrow(message);
  });
});

describe('REST limits and the workload policy', () => {
  it('defaults to DEFAULT_REST_LIMITS and the system namespaces', () => {
    const c = loadConfig({ DATABASE_URL: 'x' });
    expect(c.limits).toEqual(DEFAULT_REST_LIMITS);
    expect(c.workloadPolicy?.systemNamespaces).toEqual(DEFAULT_SYSTEM_NAMESPACES);
  });

  it('reads every limit and names a bad one', () => {
    const c = loadConfig({
      DATABASE_URL: 'x',
      FLOTILLA_RATE_LIMIT_PER_SECOND: '7',
      FLOTILLA_SSE_STREAMS_PER_TOKEN: '3',
      FLOTILLA_PENDING_CLUSTER_TTL_SECONDS: '600',
      FLOTILLA_POLICY_SYSTEM_NAMESPACES: 'kube-system, agents',
    });
    expect(c.limits).toMatchObject({ requestsPerSecond: 7, streamsPerToken: 3, pendingClusterTtlSeconds: 600 });
    expect(c.workloadPolicy?.systemNamespaces).toEqual(['kube-system', 'agents']);
    expect(() => loadConfig({ DATABASE_URL: 'x', FLOTILLA_REGISTRATIONS_PER_MINUTE: '0' })).toThrow(
      /FLOTILLA_REGISTRATIONS_PER_MINUTE must be an integer between 1/,
    );
    expect(() => loadConfig({ DATABASE_URL: 'x', FLOTILLA_POLICY_SYSTEM_NAMESPACES: 'Kube_System' })).toThrow(
      /FLOTILLA_POLICY_SYSTEM_NAMESPACES must list namespace names/,
    );
  });
});
