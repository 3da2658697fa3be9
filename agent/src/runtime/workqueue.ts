import { systemClock, type Clock, type Timer } from './clock.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';

/** What a queue reports; implemented with prom-client in metrics.ts. */
export interface QueueMetrics {
  setDepth(depth: number): void;
  incAdds(): void;
  incRetries(): void;
  /** Seconds between get() and done() of one item. */
  observeWorkDuration(seconds: number): void;
}

export interface WorkQueueOptions {
  rateLimiter?: RateLimiter;
  clock?: Clock;
  metrics?: QueueMetrics;
}

/**
 * A de-duplicating, rate-limited work queue of `namespace/name` keys with client-go's contract:
 *
 * - a key is queued at most once however often it is added (`dirty`);
 * - a key handed out by get() is `processing` until done(); adding it meanwhile marks it dirty and
 *   it is queued again once after done(), so one key is never reconciled concurrently;
 * - addRateLimited() delays retries per key with exponential backoff, forget() resets it.
 *
 * Unlike client-go, get() returns undefined as soon as shutDown() is called, even with items still
 * queued: a stopping controller should take no new work, and the next leader lists everything anew.
 */
export class WorkQueue {
  readonly #queue: string[] = [];
  readonly #dirty = new Set<string>();
  /** Keys handed out and not yet done, with the time they were handed out. */
  readonly #processing = new Map<string, number>();
  /** Keys waiting for addAfter(), with when they become ready. */
  readonly #waiting = new Map<string, { readyAt: number; timer: Timer }>();
  readonly #getters: ((key: string | undefined) => void)[] = [];
  readonly #drainWaiters: (() => void)[] = [];
  readonly #rateLimiter: RateLimiter;
  readonly #clock: Clock;
  readonly #metrics: QueueMetrics | undefined;
  #shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter(this.#clock);
    this.#metrics = options.metrics;
  }

  /** Queues `key` unless it is already queued; a key being processed is queued again after done(). */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    this.#metrics?.incAdds();
    if (this.#processing.has(key)) return;
    this.#queue.push(key);
    this.#dispatch();
  }

  /**
   * Queues `key` after `ms`. While the key waits, a later call with an earlier ready time moves it
   * forward; one with a later ready time is ignored (the key will be processed anyway).
   */
  addAfter(key: string, ms: number): void {
    if (this.#shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const readyAt = this.#clock.now() + ms;
    const existing = this.#waiting.get(key);
    if (existing && existing.readyAt <= readyAt) return;
    existing?.timer.cancel();
    const timer = this.#clock.setTimer(() => {
      this.#waiting.delete(key);
      this.add(key);
    }, ms);
    this.#waiting.set(key, { readyAt, timer });
  }

  /** Queues `key` after its rate-limited backoff (per-key exponential, overall token bucket). */
  addRateLimited(key: string): void {
    if (this.#shuttingDown) return;
    this.#metrics?.incRetries();
    this.addAfter(key, this.#rateLimiter.when(key));
  }

  /** Resets the backoff of `key`; call after a successful reconcile. */
  forget(key: string): void {
    this.#rateLimiter.forget(key);
  }

  /** Retries of `key` since it was last forgotten. */
  numRequeues(key: string): number {
    return this.#rateLimiter.numRequeues(key);
  }

  /**
   * The next key to process; waits until one is available. Resolves undefined once the queue is
   * shutting down. Every key returned must be passed to done().
   */
  get(): Promise<string | undefined> {
    if (this.#shuttingDown) return Promise.resolve(undefined);
    const key = this.#take();
    if (key !== undefined) return Promise.resolve(key);
    return new Promise((resolve) => this.#getters.push(resolve));
  }

  /** Marks `key` as processed; if it was added meanwhile, it is queued again now. */
  done(key: string): void {
    const startedAt = this.#processing.get(key);
    if (startedAt === undefined) return;
    this.#processing.delete(key);
    this.#metrics?.observeWorkDuration((this.#clock.now() - startedAt) / 1000);
    if (this.#dirty.has(key) && !this.#shuttingDown) {
      this.#queue.push(key);
      this.#dispatch();
    }
    if (this.#processing.size === 0) this.#drainWaiters.splice(0).forEach((resolve) => resolve());
  }

  /** Number of keys ready to be handed out (not counting delayed or processing ones). */
  len(): number {
    return this.#queue.length;
  }

  /** Number of keys handed out and not yet done. */
  processing(): number {
    return this.#processing.size;
  }

  isShuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Stops handing out work: waiting get() calls resolve undefined, queued and delayed keys are dropped. */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    for (const { timer } of this.#waiting.values()) timer.cancel();
    this.#waiting.clear();
    this.#queue.length = 0;
    this.#dirty.clear();
    this.#metrics?.setDepth(0);
    this.#getters.splice(0).forEach((resolve) => resolve(undefined));
  }

  /** shutDown(), then resolves once every key handed out has been passed to done(). */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.#processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  #take(): string | undefined {
    const key = this.#queue.shift();
    if (key === undefined) return undefined;
    this.#dirty.delete(key);
    this.#processing.set(key, this.#clock.now());
    this.#metrics?.setDepth(this.#queue.length);
    return key;
  }

  #dispatch(): void {
    this.#metrics?.setDepth(this.#queue.length);
    while (this.#getters.length > 0 && this.#queue.length > 0) {
      const resolve = this.#getters.shift()!;
      resolve(this.#take());
    }
  }
}
