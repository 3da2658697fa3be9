/**
 * Why NATS reconnects fail: a certificate that does not verify, or the network. nats.js keeps the
 * reason of a failed reconnect to itself (it only reports that it is reconnecting), so while the
 * link is disconnected a watch dials the servers itself, with the same CA, as far as the TLS
 * handshake: a certificate failure goes to the link's TLS health (logged with the setting to
 * check, counted in flotilla_agent_hublink_tls_failures_total{peer="nats"}, /readyz not ready); a
 * network failure is logged once per outage and leaves readiness alone (the agent keeps
 * reconciling locally while NATS is away). The first reconnect usually succeeds within a second
 * (a JWT renewed, a node restarted), so the first probe waits a little.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Logger } from 'pino';
import { backoffDelay, type BackoffOptions } from '../runtime/backoff.js';
import { errorText } from './error-text.js';
import { isCertificateError, type LinkTlsHealth } from './tls.js';

const PROBE_TIMEOUT_MS = 5000;
/** A server with `handshake_first` sends nothing before the TLS handshake. */
const INFO_WAIT_MS = 1000;

/** host and port of a NATS URL (`tls://h:p`, `nats://h:p` or `h:p`; 4222 by default). */
export function natsHostPort(url: string): { host: string; port: number } {
  const parsed = new URL(/^[a-z]+:\/\//i.test(url) ? url : `nats://${url}`);
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(parsed.port || 4222) };
}

/**
 * Dials one NATS server and runs the TLS handshake against `caPem` (the system's CAs when
 * undefined). Resolves undefined when the certificate verifies, else the error (never rejects).
 */
export function probeNatsTls(url: string, caPem: string | undefined, timeoutMs = PROBE_TIMEOUT_MS): Promise<unknown> {
  const { host, port } = natsHostPort(url);
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    let secure: tls.TLSSocket | undefined;
    const finish = (result: unknown): void => {
      clearTimeout(timer);
      clearTimeout(infoTimer);
      secure?.destroy();
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () =>
        finish(
          Object.assign(new Error(`no TLS handshake with ${host}:${port} within ${timeoutMs} ms`), {
            code: 'ETIMEDOUT',
          }),
        ),
      timeoutMs,
    );
    let infoTimer: NodeJS.Timeout | undefined;
    const startTls = (): void => {
      if (secure) return;
      clearTimeout(infoTimer);
      socket.removeAllListeners('data');
      secure = tls.connect({
        socket,
        host,
        ...(net.isIP(host) ? {} : { servername: host }),
        ...(caPem !== undefined ? { ca: caPem } : {}),
        rejectUnauthorized: true,
      });
      secure.once('secureConnect', () => finish(secure!.authorized ? undefined : secure!.authorizationError));
      secure.once('error', finish);
    };
    socket.once('error', finish);
    socket.once('connect', () => (infoTimer = setTimeout(startTls, INFO_WAIT_MS)));
    // The server's INFO line comes first in plaintext; TLS starts after it.
    socket.once('data', startTls);
  });
}

export interface NatsTlsWatchDeps {
  servers: string[];
  /** probeNatsTls with the link's CA. */
  probe: (url: string) => Promise<unknown>;
  tls: Pick<LinkTlsHealth, 'observe'>;
  logger: Logger;
  /** Delay before the first probe after a disconnect, and the backoff's bounds; default 2 s to 30 s. */
  backoff?: BackoffOptions;
}

/** Follows the link's connection: probes while it is disconnected, stops when it is back. */
export interface NatsTlsWatch {
  disconnected(): void;
  reconnected(): void;
  stop(): void;
}

export function watchNatsTls(deps: NatsTlsWatchDeps): NatsTlsWatch {
  const backoff = deps.backoff ?? { initialMs: 2000, maxMs: 30_000 };
  let timer: NodeJS.Timeout | undefined;
  let attempt = 0;
  let toldUnreachable = false;
  let down = false;

  async function probeAll(): Promise<void> {
    timer = undefined;
    const results = await Promise.all(deps.servers.map((s) => deps.probe(s)));
    if (!down) return;
    const certificate = results.find((r) => isCertificateError(r));
    deps.tls.observe('nats', certificate);
    const failures = results.filter((r) => r !== undefined);
    if (certificate === undefined && failures.length === results.length && !toldUnreachable) {
      toldUnreachable = true;
      deps.logger.warn(
        { errors: failures.map((e) => errorText(e)) },
        'NATS is unreachable (the network, not a certificate); reconnecting',
      );
    }
    attempt++;
    if (down) timer = setTimeout(() => void probeAll(), backoffDelay(attempt + 1, backoff));
  }

  return {
    disconnected() {
      if (down) return;
      down = true;
      attempt = 0;
      toldUnreachable = false;
      timer = setTimeout(() => void probeAll(), backoff.initialMs);
    },
    reconnected() {
      down = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
      deps.tls.observe('nats', undefined);
    },
    stop() {
      down = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
