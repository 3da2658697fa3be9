import type { Logger } from 'pino';
import { systemClock, type Clock } from '../../runtime/clock.js';
import type { TlsMaterial } from '../server.js';
import { BACKDATE_MS, certInfo, createCa, createServingCert, isSignedBy } from './pki.js';
import { planRotation, type ObservedCerts, type RotationPolicy, type RotationStep } from './rotation.js';
import { decodeState, encodeState, pemLine, type CertState } from './state.js';
import type { SecretStore } from './store.js';

export interface CertManagerOptions {
  store: SecretStore;
  policy: RotationPolicy;
  /** DNS names and IPs the serving certificate must cover. */
  hosts: readonly string[];
  /** Called with the serving certificate whenever it changes (the server reloads it). */
  onServingCert(tls: TlsMaterial): void | Promise<void>;
  /**
   * Writes the CA bundle into the webhook configurations; resolves once the apiserver stored it.
   * Called whenever the bundle differs from what this replica last published.
   */
  publishBundle(bundlePem: string): Promise<void>;
  logger: Logger;
  clock?: Clock;
  caCommonName?: string;
}

/**
 * Keeps the webhook's CA, serving certificate and CA bundle in the Secret, the server and the
 * webhook configurations in step; every replica runs one. Each sync reads the Secret, takes at
 * most one rotation step (see rotation.ts), stores it, hands the serving certificate to the
 * server, and publishes the bundle. Secret data never reaches the logs.
 */
export class CertManager {
  readonly #o: CertManagerOptions;
  readonly #log: Logger;
  readonly #clock: Clock;
  #servingPem: string | undefined;
  #published: { bundle: string; at: number } | undefined;

  constructor(options: CertManagerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.logger.child({ component: 'webhook-certs' });
  }

  /** True once a serving certificate was handed to the server and the bundle published. */
  isReady(): boolean {
    return this.#servingPem !== undefined && this.#published !== undefined;
  }

  /** One sync; returns the step taken (`none`/`wait` when nothing changed). */
  async sync(): Promise<RotationStep> {
    const stored = await this.#o.store.read();
    const state = stored ? decodeState(stored.data, stored.annotations) : { bundle: [] };
    const now = this.#clock.now();
    const publishedAt =
      state.nextCa && this.#published?.bundle.includes(state.nextCa.certPem) ? this.#published.at : undefined;
    const step = planRotation({
      state,
      observed: await observe(state),
      policy: this.#o.policy,
      wantedHosts: this.#o.hosts,
      now,
      publishedAt,
    });
    let current = state;
    if (step.action !== 'none' && step.action !== 'wait') {
      const next = await this.#apply(step, state, now);
      const encoded = encodeState(next);
      const outcome = await this.#o.store.write(encoded.data, encoded.annotations, stored?.resourceVersion);
      if (outcome === 'conflict') {
        this.#log.info({ step: step.action }, 'certificate Secret changed meanwhile; re-reading on the next sync');
        return { action: 'none' };
      }
      this.#log.info(
        { step: step.action, ...('reason' in step ? { reason: step.reason } : {}) },
        'certificates updated',
      );
      current = next;
    }
    // Serve first, then publish: a new CA is in the bundle already (announced) or the first one.
    await this.#load(current);
    await this.#publish(current);
    return step;
  }

  async #load(state: CertState): Promise<void> {
    const serving = state.serving;
    if (!serving || serving.certPem === this.#servingPem) return;
    await this.#o.onServingCert({ certPem: serving.certPem, keyPem: serving.keyPem });
    if (this.#servingPem !== undefined)
      this.#log.info({ serial: certInfo(serving.certPem).serial }, 'serving certificate reloaded');
    this.#servingPem = serving.certPem;
  }

  async #publish(state: CertState): Promise<void> {
    const bundle = state.bundle.map(pemLine).join('');
    if (bundle === '' || this.#published?.bundle === bundle) return;
    await this.#o.publishBundle(bundle);
    this.#published = { bundle, at: this.#clock.now() };
    this.#log.info({ cas: state.bundle.length }, 'CA bundle published to the webhook configurations');
  }

  async #apply(step: RotationStep, state: CertState, now: number): Promise<CertState> {
    const { policy, hosts } = this.#o;
    const cn = this.#o.caCommonName ?? 'flotilla-webhook-ca';
    switch (step.action) {
      case 'create': {
        const ca = await createCa(cn, now, policy.caValidityMs);
        const serving = await createServingCert(ca, hosts, now, policy.servingValidityMs);
        return { ca, serving, bundle: [ca.certPem], bundleChangedAt: now };
      }
      case 'announce-ca': {
        const nextCa = await createCa(cn, now, policy.caValidityMs);
        // Keep every CA already trusted: a replica may still serve a certificate of the previous one.
        return { ...state, nextCa, bundle: [...state.bundle, nextCa.certPem], bundleChangedAt: now };
      }
      case 'promote-ca': {
        const ca = state.nextCa!;
        const serving = await createServingCert(ca, hosts, now, policy.servingValidityMs);
        return {
          ca,
          serving,
          bundle: [ca.certPem, ...state.bundle.filter((c) => c !== ca.certPem)],
          bundleChangedAt: now,
        };
      }
      case 'retire-ca':
        return { ...state, bundle: [state.ca!.certPem], bundleChangedAt: now };
      case 'renew-serving':
        return { ...state, serving: await createServingCert(state.ca!, hosts, now, policy.servingValidityMs) };
      default:
        return state;
    }
  }
}

/** Lifetimes count from issuance, not from the backdated notBefore. */
function issued<T extends { notBefore: number }>(info: T): T {
  return { ...info, notBefore: info.notBefore + BACKDATE_MS };
}

async function observe(state: CertState): Promise<ObservedCerts> {
  const observed: ObservedCerts = {};
  try {
    if (state.ca) observed.ca = issued(certInfo(state.ca.certPem));
  } catch {
    return observed; // an unreadable CA is replaced as if absent
  }
  if (state.serving && state.ca) {
    try {
      const info = issued(certInfo(state.serving.certPem));
      observed.serving = { ...info, signedByCa: await isSignedBy(state.serving.certPem, state.ca.certPem) };
    } catch {
      // unreadable serving certificate: renewed
    }
  }
  return observed;
}
