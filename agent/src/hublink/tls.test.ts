import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createHubLinkMetrics } from './metrics.js';
import { createLinkTlsHealth, isCertificateError } from './tls.js';

const certError = (code: string): Error => Object.assign(new Error('unable to verify the first certificate'), { code });

describe('isCertificateError', () => {
  it('knows certificate failures by their code, also as the cause of a fetch failure', () => {
    expect(isCertificateError(certError('UNABLE_TO_VERIFY_LEAF_SIGNATURE'))).toBe(true);
    expect(isCertificateError(new TypeError('fetch failed', { cause: certError('DEPTH_ZERO_SELF_SIGNED_CERT') }))).toBe(
      true,
    );
    expect(isCertificateError(certError('ERR_TLS_CERT_ALTNAME_INVALID'))).toBe(true);
    expect(isCertificateError(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).toBe(false);
    expect(isCertificateError(undefined)).toBe(false);
  });
});

describe('the link TLS health', () => {
  it('is not ready while a peer certificate fails, counts each failure and recovers on success', async () => {
    const registry = new Registry();
    const health = createLinkTlsHealth({ logger: pino({ level: 'silent' }), metrics: createHubLinkMetrics(registry) });
    expect(health.ready()).toBe(true);
    expect(health.observe('nats', certError('SELF_SIGNED_CERT_IN_CHAIN'))).toBe(true);
    expect(health.observe('nats', certError('SELF_SIGNED_CERT_IN_CHAIN'))).toBe(true);
    expect(health.ready()).toBe(false);
    expect(health.observe('hub', new Error('HTTP 503'))).toBe(false);
    expect(health.ready()).toBe(false);
    health.observe('nats', undefined);
    expect(health.ready()).toBe(true);
    const metric = await registry.getSingleMetric('flotilla_agent_hublink_tls_failures_total')!.get();
    expect(metric.values).toEqual([{ value: 2, labels: { peer: 'nats' } }]);
  });
});
