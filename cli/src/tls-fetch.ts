/**
 * fetch towards the hub with its CA (--ca-file) or, with --insecure, without checking its
 * certificate. The entry point passes this to runCli; tests pass their own fetch.
 */
import { Agent } from 'undici';
import type { Fetch } from './client.js';

export interface HubTls {
  /** PEM of the CA that verifies the hub's certificate; the system's CAs when absent. */
  caPem: string | undefined;
  /** Skip checking the hub's certificate (local use only). */
  insecure: boolean;
}

export function tlsFetch(tls: HubTls): Fetch {
  if (tls.caPem === undefined && !tls.insecure) return (input, init) => fetch(input, init);
  const dispatcher = new Agent({
    connect: { ...(tls.caPem !== undefined ? { ca: tls.caPem } : {}), rejectUnauthorized: !tls.insecure },
  });
  return (input, init) => fetch(input, { ...init, dispatcher });
}
