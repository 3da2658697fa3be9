/**
 * TLS towards NATS (the hub's REST API: hub-fetch.ts): a NATS connector that verifies the servers
 * against their CA (--nats-ca-file), and the link's TLS health. A certificate that does not verify is a configuration problem no retry fixes by itself:
 * it is logged saying which setting to check, counted, and turns /readyz not ready until a
 * connection verifies again; the link keeps retrying with backoff (never a crash loop).
 */
import { connect } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { HubLinkMetrics } from './metrics.js';
import type { NatsConnector } from './types.js';

export type TlsPeer = 'hub' | 'nats';

/**
 * The real NATS connector with the servers' CA. The first connection fails instead of waiting:
 * the runnable retries with backoff and so can say why (a wrong CA would otherwise wait silently).
 */
export function natsConnector(caPem: string | undefined): NatsConnector {
  return {
    connect: (options) =>
      connect({ ...options, ...(caPem !== undefined ? { tls: { ca: caPem } } : {}), waitOnFirstConnect: false }),
  };
}

const CERTIFICATE_CODE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS/;

/** Whether an error (or its cause) is a certificate that did not verify. */
export function isCertificateError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CERTIFICATE_CODE.test(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

const FIX: Record<TlsPeer, string> = {
  hub: "the hub's HTTPS certificate does not verify: check --hub-ca-file (FLOTILLA_HUB_CA_FILE) and the hub's certificate",
  nats: "the NATS servers' certificate does not verify: check --nats-ca-file (FLOTILLA_NATS_CA_FILE) and the servers' certificates",
};

/** Which peers' certificates currently fail; /readyz is not ready while any does. */
export interface LinkTlsHealth {
  /** Records the outcome of a connection attempt to `peer`; true when it was a certificate failure. */
  observe(peer: TlsPeer, err: unknown): boolean;
  ready(): boolean;
  /** The readiness check: throws the reason (shown by /readyz) while a peer's certificate fails. */
  check(): boolean;
}

export function createLinkTlsHealth(deps: { logger: Logger; metrics: HubLinkMetrics }): LinkTlsHealth {
  const failing = new Set<TlsPeer>();
  return {
    observe(peer, err) {
      if (err === undefined || !isCertificateError(err)) {
        failing.delete(peer);
        return false;
      }
      failing.add(peer);
      deps.metrics.tlsFailures.inc({ peer });
      const code = (err as { code?: unknown }).code ?? (err as { cause?: { code?: unknown } }).cause?.code;
      deps.logger.error({ peer, code }, FIX[peer]);
      return true;
    },
    ready: () => failing.size === 0,
    check() {
      if (failing.size > 0) throw new Error([...failing].map((peer) => FIX[peer]).join('; '));
      return true;
    },
  };
}
