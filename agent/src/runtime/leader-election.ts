import { sleep, untilAborted } from '@flotilla/api';
import type { Logger } from 'pino';
import { isKubeStatus } from '../errors.js';
import { systemClock, type Clock } from './clock.js';
import type { KubeObject } from './kube-object.js';
import { formatMicroTime } from './kube-time.js';
import { resourcePath, Resources } from './resource.js';
import type { KubeRest } from './rest.js';

/** coordination.k8s.io/v1 LeaseSpec; times are MicroTime strings. */
export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/** What a candidate should do with the lease it just read. */
export type LeaderDecision =
  | { action: 'create' }
  /** The lease is free or its holder stopped renewing: take it over. */
  | { action: 'acquire' }
  /** We hold it: renew. */
  | { action: 'renew' }
  /** Someone else holds it and may still be alive. */
  | { action: 'wait'; holder: string; expiresInMs: number };

export interface DecisionInput {
  lease: Lease | undefined;
  identity: string;
  nowMs: number;
  /**
   * When this candidate first saw the lease's current holder and renewTime, on its own clock.
   * Expiry is judged from that local observation, not from renewTime, so clock skew between
   * replicas can't make one take over a lease that is still being renewed (as client-go does).
   */
  observedAtMs: number;
  /** Used when the lease does not say its own duration. */
  leaseDurationMs: number;
}

/** Pure decision of one election round: create, acquire, renew or wait. */
export function decideLeadership(input: DecisionInput): LeaderDecision {
  const spec = input.lease?.spec;
  if (!input.lease) return { action: 'create' };
  const holder = spec?.holderIdentity ?? '';
  if (holder === '') return { action: 'acquire' };
  if (holder === input.identity) return { action: 'renew' };
  const durationMs = spec?.leaseDurationSeconds ? spec.leaseDurationSeconds * 1000 : input.leaseDurationMs;
  const expiresInMs = input.observedAtMs + durationMs - input.nowMs;
  return expiresInMs > 0 ? { action: 'wait', holder, expiresInMs } : { action: 'acquire' };
}

/** The lease to write for a create, acquire or renew decision (pure). */
export function nextLease(
  current: Lease | undefined,
  action: 'create' | 'acquire' | 'renew',
  params: { identity: string; nowMs: number; leaseDurationMs: number; namespace: string; name: string },
): Lease {
  const now = formatMicroTime(params.nowMs);
  const old = current?.spec ?? {};
  const changedHands = action !== 'renew' && (old.holderIdentity ?? '') !== params.identity;
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: current?.metadata ?? { name: params.name, namespace: params.namespace },
    spec: {
      ...old,
      holderIdentity: params.identity,
      leaseDurationSeconds: Math.ceil(params.leaseDurationMs / 1000),
      acquireTime: action === 'renew' ? (old.acquireTime ?? now) : now,
      renewTime: now,
      leaseTransitions: action === 'create' ? 0 : (old.leaseTransitions ?? 0) + (changedHands ? 1 : 0),
    },
  };
}

/** The lease that hands leadership back: no holder, so the next candidate takes it at once. */
export function releasedLease(current: Lease, nowMs: number): Lease {
  const now = formatMicroTime(nowMs);
  return {
    ...current,
    spec: { ...current.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now },
  };
}

/**
 * Reads and writes one Lease with optimistic concurrency (replace carries
 * metadata.resourceVersion). `signal` aborts a request that takes too long.
 */
export interface LeaseClient {
  get(namespace: string, name: string, signal?: AbortSignal): Promise<Lease | undefined>;
  /** Rejects (409) if the lease exists. */
  create(lease: Lease, signal?: AbortSignal): Promise<Lease>;
  /** Rejects (409) if the lease changed since it was read. */
  replace(lease: Lease, signal?: AbortSignal): Promise<Lease>;
}

/** A LeaseClient over the raw JSON API. */
export function kubeLeaseClient(rest: KubeRest): LeaseClient {
  const ref = Resources.leases;
  return {
    async get(namespace, name, signal) {
      try {
        return await rest.request<Lease>({ method: 'GET', path: resourcePath(ref, namespace, name), signal });
      } catch (err) {
        if (isKubeStatus(err, 404)) return undefined;
        throw err;
      }
    },
    create: (lease, signal) =>
      rest.request<Lease>({ method: 'POST', path: resourcePath(ref, lease.metadata?.namespace), body: lease, signal }),
    replace: (lease, signal) =>
      rest.request<Lease>({
        method: 'PUT',
        path: resourcePath(ref, lease.metadata?.namespace, lease.metadata?.name),
        body: lease,
        signal,
      }),
  };
}

/** What the elector reports; implemented with prom-client in metrics.ts. */
export interface LeaderMetrics {
  setLeader(leading: boolean): void;
}

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  /** Unique per replica, e.g. the pod name. */
  identity: string;
  client: LeaseClient;
  logger: Logger;
  /** How long a lease is valid without renewal; default 15 s. */
  leaseDurationMs?: number;
  /** A leader that could not renew for this long steps down; default 10 s. */
  renewDeadlineMs?: number;
  /** Pause between attempts to acquire or renew; default 2 s. */
  retryPeriodMs?: number;
  /** Clear the holder when run() is cancelled, so another replica takes over at once; default true. */
  releaseOnCancel?: boolean;
  /**
   * Called once this replica leads. `signal` aborts when leadership ends. Leadership is held until
   * it returns or throws *and* run() is cancelled, so it may return early after starting work.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called once leadership ends, before the lease is released; awaited. */
  onStoppedLeading(): void | Promise<void>;
  /** Called whenever a different holder is observed. */
  onNewLeader?(identity: string): void;
  clock?: Clock;
  metrics?: LeaderMetrics;
  random?: () => number;
}

/** How run() ended: cancelled by its signal, or leadership lost (renewals failed, someone else took over). */
export type ElectionOutcome = 'stopped' | 'lost';

type RoundResult = 'leading' | 'held-by-other' | 'failed';

/**
 * Lease-based leader election (client-go's leaderelection with a coordination.k8s.io Lease).
 * Candidates poll every retryPeriod; the holder renews every retryPeriod and steps down when it
 * could not renew within renewDeadline or sees another holder; a stopped leader clears the holder.
 */
export class LeaderElector {
  readonly #o: Required<Pick<LeaderElectionOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>> &
    LeaderElectionOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  #observed: { holder: string; renewTime: string } | undefined;
  #observedAt = 0;
  #leading = false;
  #leader: string | undefined;

  constructor(options: LeaderElectionOptions) {
    this.#o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...options };
    this.#clock = options.clock ?? systemClock;
    this.#log = options.logger.child({ lease: `${options.namespace}/${options.name}`, identity: options.identity });
  }

  isLeader(): boolean {
    return this.#leading;
  }

  /** The holder last observed (this replica's identity while leading). */
  leader(): string | undefined {
    return this.#leader;
  }

  /** Campaigns until leading, leads until `signal` aborts or leadership is lost, then steps down. */
  async run(signal: AbortSignal): Promise<ElectionOutcome> {
    while (!signal.aborted && (await this.#round(this.#o.renewDeadlineMs)) !== 'leading') await this.#pause(signal);
    if (signal.aborted) return 'stopped';
    const leading = new AbortController();
    this.#setLeading(true);
    this.#log.info('became leader');
    const work = Promise.resolve()
      .then(() => this.#o.onStartedLeading(leading.signal))
      .catch((err: unknown) => this.#log.error({ err }, 'onStartedLeading failed'));
    const outcome = await this.#renewUntilLost(signal);
    leading.abort();
    this.#setLeading(false);
    this.#log.info({ outcome }, 'stopped leading');
    try {
      await this.#o.onStoppedLeading();
    } catch (err) {
      this.#log.error({ err }, 'onStoppedLeading failed');
    }
    await work;
    if (outcome === 'stopped' && this.#o.releaseOnCancel !== false) await this.release();
    return outcome;
  }

  /** Clears the holder if this replica still holds the lease. Never throws. */
  async release(): Promise<void> {
    try {
      const lease = await this.#o.client.get(this.#o.namespace, this.#o.name);
      if (!lease || lease.spec?.holderIdentity !== this.#o.identity) return;
      await this.#o.client.replace(releasedLease(lease, this.#clock.now()));
      this.#log.info('released lease');
    } catch (err) {
      this.#log.warn({ err }, 'could not release lease; it will expire instead');
    }
  }

  async #renewUntilLost(signal: AbortSignal): Promise<ElectionOutcome> {
    let lastRenew = this.#clock.now();
    while (!signal.aborted) {
      await this.#pause(signal);
      if (signal.aborted) break;
      // A renewal may only take until the deadline: a hung request must not keep us "leading".
      const remaining = lastRenew + this.#o.renewDeadlineMs - this.#clock.now();
      const result = remaining > 0 ? await this.#round(remaining) : 'failed';
      if (result === 'leading') lastRenew = this.#clock.now();
      else if (result === 'held-by-other') return 'lost';
      else if (this.#clock.now() - lastRenew >= this.#o.renewDeadlineMs) return 'lost';
    }
    return 'stopped';
  }

  /** One read-decide-write round, given up (as failed) after `timeoutMs`. */
  async #round(timeoutMs: number): Promise<RoundResult> {
    const timeout = new AbortController();
    const timer = this.#clock.setTimer(() => timeout.abort(), timeoutMs);
    const timedOut = untilAborted(timeout.signal).then((): RoundResult => 'failed');
    try {
      return await Promise.race([this.#attempt(timeout.signal), timedOut]);
    } finally {
      timer.cancel();
      timeout.abort();
    }
  }

  async #attempt(signal: AbortSignal): Promise<RoundResult> {
    let lease: Lease | undefined;
    try {
      lease = await this.#o.client.get(this.#o.namespace, this.#o.name, signal);
    } catch (err) {
      this.#log.warn({ err }, 'could not read lease');
      return 'failed';
    }
    this.#observe(lease);
    const decision = decideLeadership({
      lease,
      identity: this.#o.identity,
      nowMs: this.#clock.now(),
      observedAtMs: this.#observedAt,
      leaseDurationMs: this.#o.leaseDurationMs,
    });
    if (decision.action === 'wait') return 'held-by-other';
    const next = nextLease(lease, decision.action, {
      identity: this.#o.identity,
      nowMs: this.#clock.now(),
      leaseDurationMs: this.#o.leaseDurationMs,
      namespace: this.#o.namespace,
      name: this.#o.name,
    });
    try {
      const written =
        decision.action === 'create'
          ? await this.#o.client.create(next, signal)
          : await this.#o.client.replace(next, signal);
      if (signal.aborted) return 'failed';
      this.#observe(written);
      return 'leading';
    } catch (err) {
      // 409 means another candidate wrote first: an ordinary lost race, not worth a warning.
      const log = isKubeStatus(err, 409) ? this.#log.debug.bind(this.#log) : this.#log.warn.bind(this.#log);
      log({ err, action: decision.action }, 'lease write failed');
      return 'failed';
    }
  }

  #observe(lease: Lease | undefined): void {
    const holder = lease?.spec?.holderIdentity ?? '';
    const renewTime = lease?.spec?.renewTime ?? '';
    if (this.#observed?.holder === holder && this.#observed.renewTime === renewTime) return;
    this.#observed = { holder, renewTime };
    this.#observedAt = this.#clock.now();
    if (holder !== '' && holder !== this.#leader) {
      this.#leader = holder;
      if (holder !== this.#o.identity) this.#log.info({ leader: holder }, 'new leader observed');
      this.#o.onNewLeader?.(holder);
    }
  }

  #setLeading(leading: boolean): void {
    this.#leading = leading;
    this.#o.metrics?.setLeader(leading);
  }

  /** retryPeriod with up to 20 % jitter, so candidates don't poll in lockstep. */
  #pause(signal: AbortSignal): Promise<void> {
    const ms = this.#o.retryPeriodMs * (1 + 0.2 * (this.#o.random ?? Math.random)());
    return sleep(ms, { signal, timers: this.#clock });
  }
}
