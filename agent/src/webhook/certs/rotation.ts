/**
 * What to do with the webhook certificates next, decided purely from the stored state and the
 * time. One step per sync; the caller issues what the step asks for, stores it, and syncs again.
 *
 * The order keeps every admission working during a CA rotation, whatever replica serves it:
 * 1. `announce-ca`: a new CA is created and added to the bundle (bundle = current + next); every
 *    replica keeps serving the certificate of the current CA.
 * 2. `promote-ca`: once the bundle with the new CA has been in the webhook configurations for the
 *    propagation time, the new CA signs a new serving certificate (bundle = new + old). Replicas
 *    that have not reloaded yet still serve a certificate the bundle trusts.
 * 3. `retire-ca`: after the replicas had time to reload, the old CA leaves the bundle.
 * The serving certificate alone is renewed (`renew-serving`) well before it expires, also while a
 * new CA waits to be promoted, or when it does not cover the hosts or was not signed by the
 * current CA.
 */
import type { CertState } from './state.js';

export interface RotationPolicy {
  caValidityMs: number;
  servingValidityMs: number;
  /** Renew when less than this fraction of a certificate's lifetime is left (e.g. 1/3). */
  renewFraction: number;
  /** Time for a bundle change to reach the apiserver before the new CA signs anything. */
  propagationMs: number;
  /** Time after promotion before the old CA leaves the bundle (replicas reload meanwhile). */
  retireAfterMs: number;
}

/** What stored certificates say about themselves (from certInfo). */
export interface ObservedCerts {
  ca?: { notBefore: number; notAfter: number };
  serving?: { notBefore: number; notAfter: number; hosts: string[]; signedByCa: boolean };
}

export type RotationStep =
  | { action: 'create' }
  | { action: 'announce-ca' }
  | { action: 'promote-ca' }
  | { action: 'retire-ca' }
  | { action: 'renew-serving'; reason: string }
  | { action: 'none' }
  /** Waiting for the bundle to reach the apiserver: `untilMs` is the earliest time to proceed. */
  | { action: 'wait'; untilMs: number };

function dueForRenewal(cert: { notBefore: number; notAfter: number }, fraction: number, now: number): boolean {
  return cert.notAfter - now < (cert.notAfter - cert.notBefore) * fraction;
}

/** What the next step is decided from. */
export interface RotationInput {
  state: CertState;
  observed: ObservedCerts;
  policy: RotationPolicy;
  /** Hosts the serving certificate must cover. */
  wantedHosts: readonly string[];
  now: number;
  /**
   * When this replica last applied a bundle containing the next CA to the webhook configurations
   * (undefined when it has not).
   */
  publishedAt?: number;
}

/** The next step. */
export function planRotation(input: RotationInput): RotationStep {
  const { state, observed, policy, now } = input;
  if (!state.ca || !observed.ca) return { action: 'create' };
  if (state.nextCa) return whileNextCaWaits(input);
  if (dueForRenewal(observed.ca, policy.renewFraction, now)) return { action: 'announce-ca' };
  const renewal = servingRenewal(input);
  if (renewal) return { action: 'renew-serving', reason: renewal };
  if (state.bundle.length > 1) {
    const at = (state.bundleChangedAt ?? 0) + policy.retireAfterMs;
    return now >= at ? { action: 'retire-ca' } : { action: 'wait', untilMs: at };
  }
  return { action: 'none' };
}

/** A next CA is announced: promote it once the bundle has propagated, meanwhile keep serving. */
function whileNextCaWaits({ state, observed, policy, now, publishedAt }: RotationInput): RotationStep {
  const ready = Math.max(
    (state.bundleChangedAt ?? 0) + policy.propagationMs,
    (publishedAt ?? Infinity) + policy.propagationMs,
  );
  if (now >= ready) return { action: 'promote-ca' };
  // The wait can outlast the serving certificate (a slow apiserver, a replica that never
  // publishes): renew it under the current CA, which the bundle still trusts, rather than serve
  // an expired one.
  const serving = observed.serving;
  if (serving && dueForRenewal(serving, policy.renewFraction, now)) {
    return { action: 'renew-serving', reason: 'expiring while the next CA propagates' };
  }
  return { action: 'wait', untilMs: ready };
}

/** Why the serving certificate must be renewed under the current CA, or undefined when it is fine. */
function servingRenewal({ observed, policy, wantedHosts, now }: RotationInput): string | undefined {
  const serving = observed.serving;
  if (!serving) return 'no serving certificate';
  if (!serving.signedByCa) return 'not signed by the current CA';
  const missing = wantedHosts.filter((h) => !serving.hosts.includes(h));
  if (missing.length > 0) return `does not cover ${missing.join(', ')}`;
  if (dueForRenewal(serving, policy.renewFraction, now)) return 'expiring';
  return undefined;
}
