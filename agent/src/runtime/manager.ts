import { setMaxListeners } from 'node:events';
import { sleep, untilAborted } from '@flotilla/api';
import type { Logger } from 'pino';
import { AgentError } from '../errors.js';
import type { IndexFunc } from './cache.js';
import { systemClock, type Clock } from './clock.js';
import { Controller, type ControllerOptions } from './controller.js';
import { ConversionHealth } from './conversion-health.js';
import type { HealthCheck, HealthServer } from './health.js';
import { Informer } from './informer.js';
import type { KubeListWatchOptions } from './kube-list-watch.js';
import type { KubeObject } from './kube-object.js';
import { LeaderElector, type LeaderElectionOptions } from './leader-election.js';
import type { ListWatcher } from './list-watch.js';
import type { RuntimeMetrics } from './metrics.js';
import type { ResourceRef } from './resource.js';
import { defaultTransform, type ObjectTransform } from './transform.js';

/**
 * Something the manager runs besides controllers: a webhook server (on every replica), the hub
 * link, a periodic job (only on the leader).
 */
export interface Runnable {
  name: string;
  /** true: runs only while this replica leads; false: on every replica (webhook servers). */
  needLeaderElection: boolean;
  /** Runs until `signal` aborts and resolves once stopped. A throw stops the whole manager. */
  start(signal: AbortSignal): void | Promise<void>;
}

function composeTransforms<T extends KubeObject>(
  base: ObjectTransform,
  own: ((obj: T) => T) | undefined,
): (obj: T) => T {
  return own ? (obj) => own(base(obj)) : base;
}

/** What informer() should list and watch. Equal requests share one informer. */
export interface InformerRequest<T> extends KubeListWatchOptions {
  resource: ResourceRef;
  indexers?: Record<string, IndexFunc<T>>;
  /**
   * Applied after the manager's transform, e.g. converting what is listed at a CRD's storage
   * version to the version the readers work in. The first request for an informer sets it.
   */
  transform?: (obj: T) => T;
  resyncMs?: number;
  relistMs?: number;
}

/** Leader election settings; callbacks, logger and metrics are the manager's. */
export type ManagerLeaderElection = Omit<
  LeaderElectionOptions,
  'logger' | 'onStartedLeading' | 'onStoppedLeading' | 'metrics' | 'clock'
>;

export interface ManagerOptions {
  logger: Logger;
  metrics: RuntimeMetrics;
  /** Builds the list/watch behind informer(): kubeListWatcher in production, fakes in tests. */
  listWatcherFor(resource: ResourceRef, options: KubeListWatchOptions): ListWatcher;
  /** Started first and closed last; gets `ping` liveness and `informers-synced` readiness. */
  health?: HealthServer;
  /** Without it this replica always leads (single replica, tests). */
  leaderElection?: ManagerLeaderElection;
  /**
   * Applied by every informer before caching (see transform.ts); default defaultTransform, which
   * drops managedFields and Node images. Informers are shared, so it must keep what any
   * controller reads.
   */
  transform?: ObjectTransform;
  /** start() fails if informers haven't synced by then; default 2 min. */
  cacheSyncTimeoutMs?: number;
  /**
   * One budget for the whole graceful shutdown, counted from stop(): draining reconciles, stopping
   * runnables; default 30 s. The lease is released right after the controllers stopped.
   */
  shutdownTimeoutMs?: number;
  clock?: Clock;
}

/**
 * Owns informers, controllers and runnables and their order of life:
 *
 * 1. health server, informers and every-replica runnables start; caches sync;
 * 2. controllers and leader runnables run only while this replica holds the lease;
 * 3. stop() (SIGTERM): controllers stop taking work and drain in-flight reconciles within the
 *    shutdown timeout, the lease is released so another replica takes over at once, then
 *    runnables, informers and the health server stop.
 *
 * Losing the lease without being asked to stop ends start() with AGENT_ERR_LEADERSHIP_LOST: the
 * process should exit and be restarted rather than risk two leaders acting.
 */
export class Manager {
  readonly #o: ManagerOptions;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #stop = new AbortController();
  readonly #informers = new Map<string, Informer<KubeObject>>();
  readonly #controllers: Controller[] = [];
  readonly #runnables: Runnable[] = [];
  readonly #elector: LeaderElector | undefined;
  readonly #conversion: ConversionHealth;
  #running: Promise<void> | undefined;
  #leaderWork: { abort: AbortController; runnables: Promise<void>[] } | undefined;
  #failure: Error | undefined;
  #leading = false;
  /** When the graceful shutdown must be over; set when stopping begins. */
  #deadline: number | undefined;

  constructor(options: ManagerOptions) {
    this.#o = options;
    this.#log = options.logger.child({ component: 'manager' });
    this.#clock = options.clock ?? systemClock;
    this.#conversion = new ConversionHealth(this.#log);
    this.#stop.signal.addEventListener('abort', () => {
      this.#deadline = this.#clock.now() + (options.shutdownTimeoutMs ?? 30_000);
    });
    const le = options.leaderElection;
    if (le) {
      this.#elector = new LeaderElector({
        ...le,
        logger: options.logger,
        clock: this.#clock,
        metrics: options.metrics.leader(`${le.namespace}/${le.name}`),
        onStartedLeading: () => this.#startLeaderWork(),
        onStoppedLeading: () => this.#stopLeaderWork(),
      });
    }
  }

  /**
   * The shared informer for a resource/namespace/selector combination, created on first request.
   * Extra indexers are added to an existing informer; resync settings of the first request win.
   */
  informer<T extends KubeObject>(request: InformerRequest<T>): Informer<T> {
    const { resource, indexers, resyncMs, relistMs, transform, ...listOptions } = request;
    const key = [resource.group, resource.version, resource.plural, listOptions.namespace ?? '*']
      .concat([listOptions.labelSelector ?? '', listOptions.fieldSelector ?? ''])
      .join('|');
    let informer = this.#informers.get(key) as Informer<T> | undefined;
    if (!informer) {
      const listWatch = this.#o.listWatcherFor(resource, listOptions);
      const name = `${resource.plural}${listOptions.namespace ? `/${listOptions.namespace}` : ''}`;
      informer = new Informer<T>({
        name,
        listWatch,
        logger: this.#o.logger,
        clock: this.#clock,
        metrics: this.#o.metrics.informer(name),
        resyncMs,
        relistMs,
        transform: composeTransforms(this.#o.transform ?? defaultTransform, transform),
        onReadResult: (err) =>
          err === undefined ? this.#conversion.readSucceeded(key) : this.#conversion.readFailed(key, err),
      });
      this.#informers.set(key, informer as unknown as Informer<KubeObject>);
      if (this.#running) informer.start();
    }
    for (const [name, fn] of Object.entries(indexers ?? {})) informer.addIndexer(name, fn);
    return informer;
  }

  /** Creates and registers a controller wired to the manager's logger, clock and metrics. */
  controller(options: Omit<ControllerOptions, 'logger' | 'clock' | 'queueMetrics' | 'reconcileMetrics'>): Controller {
    this.#assertNotStarted('controllers');
    const controller = new Controller({
      ...options,
      logger: this.#o.logger,
      clock: this.#clock,
      queueMetrics: this.#o.metrics.queue(options.name),
      reconcileMetrics: this.#o.metrics.reconcile(options.name),
    });
    this.#controllers.push(controller);
    return controller;
  }

  /** Registers a runnable (webhook server, hub link, ...). */
  add(runnable: Runnable): void {
    this.#assertNotStarted('runnables');
    this.#runnables.push(runnable);
  }

  /** Adds a readiness check to the health server, if there is one. */
  addReadinessCheck(name: string, check: HealthCheck): void {
    this.#o.health?.addReadinessCheck(name, check);
  }

  isLeader(): boolean {
    return this.#leading;
  }

  /** The port of the health server while it listens (useful with port 0). */
  healthPort(): number | undefined {
    return this.#o.health?.port();
  }

  /** True once every informer has synced. */
  hasSynced(): boolean {
    return [...this.#informers.values()].every((i) => i.hasSynced());
  }

  /**
   * Runs everything until stop(). Resolves after a clean shutdown; rejects when startup fails
   * (AGENT_ERR_CACHE_SYNC, AGENT_ERR_HEALTH_SERVER), leadership is lost (AGENT_ERR_LEADERSHIP_LOST)
   * or a runnable fails (AGENT_ERR_MANAGER) — after shutting everything down in each case.
   */
  start(): Promise<void> {
    this.#running ??= this.#run();
    return this.#running;
  }

  /** Shuts down gracefully (see the class comment) and resolves when done. */
  async stop(reason: string): Promise<void> {
    if (!this.#stop.signal.aborted) {
      this.#log.info({ reason }, 'stopping');
      this.#stop.abort();
    }
    await this.#running?.catch(() => undefined);
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    const everyReplica: Promise<void>[] = [];
    try {
      await this.#startHealth();
      for (const informer of this.#informers.values()) informer.start();
      for (const r of this.#runnables) if (!r.needLeaderElection) everyReplica.push(this.#runRunnable(r, signal));
      await this.#waitForCacheSync();
      if (signal.aborted) return;
      this.#log.info({ informers: this.#informers.size }, 'caches synced');
      if (this.#elector) {
        const outcome = await this.#elector.run(signal);
        if (outcome === 'lost' && !signal.aborted) {
          this.#fail(new AgentError('AGENT_ERR_LEADERSHIP_LOST', 'lost the leader election lease'));
        }
      } else {
        this.#startLeaderWork();
        await untilAborted(signal);
        await this.#stopLeaderWork();
      }
    } catch (err) {
      this.#fail(err instanceof Error ? err : new AgentError('AGENT_ERR_MANAGER', String(err)));
    } finally {
      this.#stop.abort();
      await this.#within(everyReplica, 'runnables');
      await Promise.all([...this.#informers.values()].map((i) => i.stop()));
      await this.#o.health?.close();
      this.#log.info('stopped');
    }
    if (this.#failure) throw this.#failure;
  }

  async #startHealth(): Promise<void> {
    const health = this.#o.health;
    if (!health) return;
    health.addLivenessCheck('ping', () => true);
    health.addReadinessCheck('informers-synced', () => this.hasSynced());
    // A kind whose reads fail on the apiserver's conversion webhook call is named here.
    health.addReadinessCheck('conversion', () => this.#conversion.check());
    // Failing readiness as soon as shutdown begins takes the replica out of Service endpoints
    // (webhooks) while it drains.
    health.addReadinessCheck('not-stopping', () => !this.#stop.signal.aborted);
    await health.start();
  }

  async #waitForCacheSync(): Promise<void> {
    const timeout = new AbortController();
    const timeoutMs = this.#o.cacheSyncTimeoutMs ?? 120_000;
    const timer = this.#clock.setTimer(() => timeout.abort(), timeoutMs);
    const signal = AbortSignal.any([timeout.signal, this.#stop.signal]);
    // Every informer waits on this one signal at once: more than the default 10 listeners is
    // expected here, not a leak (each is removed when its informer syncs).
    setMaxListeners(this.#informers.size + 10, signal);
    try {
      await Promise.all([...this.#informers.values()].map((i) => i.waitForSync(signal)));
    } catch (err) {
      if (this.#stop.signal.aborted) return;
      const waiting = [...this.#informers.values()].filter((i) => !i.hasSynced()).map((i) => i.name);
      const why = this.#conversion.summary();
      const message = `caches not synced after ${timeoutMs} ms: ${waiting.join(', ')}${why ? ` (${why})` : ''}`;
      throw new AgentError('AGENT_ERR_CACHE_SYNC', message, {
        cause: err,
      });
    } finally {
      timer.cancel();
    }
  }

  #startLeaderWork(): void {
    this.#leading = true;
    const abort = new AbortController();
    const runnables = this.#runnables
      .filter((r) => r.needLeaderElection)
      .map((r) => this.#runRunnable(r, abort.signal));
    this.#leaderWork = { abort, runnables };
    for (const c of this.#controllers) c.start();
    this.#log.info({ controllers: this.#controllers.map((c) => c.name) }, 'controllers started');
  }

  /**
   * Drains controllers and stops leader runnables side by side. When not asked to stop
   * (leadership lost), in-flight reconciles abort at once: another replica may be acting already.
   */
  async #stopLeaderWork(): Promise<void> {
    this.#leading = false;
    const lost = !this.#stop.signal.aborted;
    const deadlineMs = this.#remainingMs();
    const work = this.#leaderWork;
    this.#leaderWork = undefined;
    work?.abort.abort();
    const [drained] = await Promise.all([
      Promise.all(this.#controllers.map((c) => c.stop({ deadlineMs, abortInFlight: lost }))),
      this.#within(work?.runnables ?? [], 'leader runnables'),
    ]);
    if (drained.includes(false)) this.#log.warn('some reconciles did not finish before the shutdown deadline');
  }

  /** What is left of the shutdown budget (all of it while not stopping). */
  #remainingMs(): number {
    const budget = this.#o.shutdownTimeoutMs ?? 30_000;
    return this.#deadline === undefined ? budget : Math.max(0, this.#deadline - this.#clock.now());
  }

  #runRunnable(r: Runnable, signal: AbortSignal): Promise<void> {
    return Promise.resolve()
      .then(() => r.start(signal))
      .catch((err: unknown) => {
        this.#log.error({ err, runnable: r.name }, 'runnable failed; stopping the manager');
        this.#fail(new AgentError('AGENT_ERR_MANAGER', `runnable ${r.name} failed`, { cause: err }));
        this.#stop.abort();
      });
  }

  async #within(work: Promise<void>[], what: string): Promise<void> {
    const deadlineMs = this.#remainingMs();
    const done = await Promise.race([
      Promise.all(work).then(() => true),
      sleep(deadlineMs, { timers: this.#clock }).then(() => false),
    ]);
    if (!done) this.#log.warn({ what }, `${what} did not stop within ${deadlineMs} ms`);
  }

  #fail(err: Error): void {
    this.#failure ??= err;
  }

  #assertNotStarted(what: string): void {
    if (this.#running) throw new AgentError('AGENT_ERR_MANAGER', `register ${what} before the manager starts`);
  }
}
