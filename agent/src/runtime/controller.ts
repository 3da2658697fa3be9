import { randomUUID } from 'node:crypto';
import { sleep } from '@flotilla/api';
import type { Logger } from 'pino';
import { systemClock, type Clock } from './clock.js';
import { enqueueObject, type KeyMapper } from './handlers.js';
import type { Informer } from './informer.js';
import { splitKey, type KubeObject } from './kube-object.js';
import type { ReconcileMetrics, ReconcileOutcome } from './metrics.js';
import type { RateLimiter } from './rate-limiter.js';
import { WorkQueue, type QueueMetrics } from './workqueue.js';

/** What a reconcile gets besides its key. */
export interface ReconcileContext {
  /** Aborts when the controller must stop at once (leadership lost, shutdown deadline passed). */
  signal: AbortSignal;
  /** Child logger bound to controller, key and a reconcile id. */
  log: Logger;
  namespace: string | undefined;
  name: string;
}

/**
 * How a successful reconcile wants to be called again: `requeueAfter` (ms) re-adds the key after
 * that delay with a fresh backoff; `requeue` re-adds it rate-limited. Nothing: done until the next
 * event. Throwing re-adds the key rate-limited and counts an error.
 */
export type ReconcileResult = { requeueAfter?: number; requeue?: boolean } | void;

export type Reconciler = (key: string, ctx: ReconcileContext) => Promise<ReconcileResult>;

export interface ControllerOptions {
  /** Names the queue, metrics and logs, e.g. `cloneset`. */
  name: string;
  reconcile: Reconciler;
  logger: Logger;
  /** Reconciles running at once (different keys only); default 1. */
  workers?: number;
  clock?: Clock;
  rateLimiter?: RateLimiter;
  queueMetrics?: QueueMetrics;
  reconcileMetrics?: ReconcileMetrics;
}

export interface StopOptions {
  /** How long in-flight reconciles may take to finish before their signal aborts. */
  deadlineMs: number;
  /** Abort in-flight reconciles at once (leadership lost: another replica may act already). */
  abortInFlight?: boolean;
}

/** After aborting, how long to wait for reconciles that ignore their signal before giving up on them. */
const ABORT_GRACE_MS = 1000;

/**
 * A generic controller: informer events are mapped to keys and queued, N workers take keys off
 * the queue and reconcile them, never the same key twice at once. Success forgets the key's
 * backoff, a throw retries it rate-limited. One start, one stop: a stopped controller is done.
 */
export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  readonly #o: ControllerOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #abort = new AbortController();
  #workers: Promise<void>[] = [];
  #unsubscribe: (() => void)[] = [];

  constructor(options: ControllerOptions) {
    this.name = options.name;
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.logger.child({ controller: options.name });
    this.queue = new WorkQueue({ clock: this.#clock, rateLimiter: options.rateLimiter, metrics: options.queueMetrics });
  }

  /**
   * Queues the keys `map` derives from every add, update (old and new object) and delete seen by
   * `informer`. Register before the informer starts, or existing objects arrive as adds anyway.
   * `options.updated` filters updates (controller-runtime's UpdateFunc predicate): an update it
   * returns false for queues nothing. A resync (old and new the same object) always passes.
   * `options.delayMs` queues keys that long after the event: the events of that window share one
   * reconcile (a key already waiting keeps its earlier time).
   */
  watch<T extends KubeObject>(
    informer: Informer<T>,
    map: KeyMapper<T> = enqueueObject,
    options: { updated?: (old: T, obj: T) => boolean; delayMs?: number } = {},
  ): void {
    const delayMs = options.delayMs ?? 0;
    const add = (...objs: T[]): void => {
      for (const key of new Set(objs.flatMap((o) => map(o)))) this.queue.addAfter(key, delayMs);
    };
    const updated = options.updated;
    this.#unsubscribe.push(
      informer.addEventHandler({
        onAdd: (obj) => add(obj),
        onUpdate: (old, obj) => {
          if (updated && old !== obj && !updated(old, obj)) return;
          add(old, obj);
        },
        onDelete: (obj) => add(obj),
      }),
    );
  }

  /** Queues `key` now, or after `afterMs`. */
  enqueue(key: string, afterMs = 0): void {
    this.queue.addAfter(key, afterMs);
  }

  isRunning(): boolean {
    return this.#workers.length > 0 && !this.queue.isShuttingDown();
  }

  /** Starts the workers. */
  start(): void {
    if (this.#workers.length > 0 || this.queue.isShuttingDown()) return;
    const n = Math.max(1, this.#o.workers ?? 1);
    this.#log.info({ workers: n }, 'starting workers');
    this.#workers = Array.from({ length: n }, () => this.#work());
  }

  /**
   * Stops taking work and waits for in-flight reconciles up to the deadline, then aborts their
   * signal. Resolves true if everything finished in time.
   */
  async stop(options: StopOptions): Promise<boolean> {
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
    if (options.abortInFlight) this.#abort.abort();
    const drained = this.queue.shutDownWithDrain().then(() => true);
    const inTime = await Promise.race([drained, sleep(options.deadlineMs, { timers: this.#clock }).then(() => false)]);
    if (!inTime) {
      this.#log.warn({ inFlight: this.queue.processing() }, 'reconciles still running at the deadline; aborting');
      this.#abort.abort();
      await Promise.race([Promise.all(this.#workers), sleep(ABORT_GRACE_MS, { timers: this.#clock })]);
    } else {
      await Promise.all(this.#workers);
    }
    this.#log.info({ drained: inTime }, 'stopped');
    return inTime;
  }

  async #work(): Promise<void> {
    for (let key = await this.queue.get(); key !== undefined; key = await this.queue.get()) {
      try {
        await this.#reconcileOne(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  async #reconcileOne(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const log = this.#log.child({ key, reconcileId: randomUUID().slice(0, 8) });
    const started = this.#clock.now();
    let outcome: ReconcileOutcome;
    try {
      const result = await this.#o.reconcile(key, { signal: this.#abort.signal, log, namespace, name });
      if (result?.requeueAfter !== undefined && result.requeueAfter > 0) {
        this.queue.forget(key);
        this.queue.addAfter(key, result.requeueAfter);
        outcome = 'requeue_after';
      } else if (result?.requeue) {
        this.queue.addRateLimited(key);
        outcome = 'requeue';
      } else {
        this.queue.forget(key);
        outcome = 'success';
      }
    } catch (err) {
      this.queue.addRateLimited(key);
      outcome = 'error';
      log.error({ err, retries: this.queue.numRequeues(key) }, 'reconcile failed; retrying with backoff');
    }
    const seconds = (this.#clock.now() - started) / 1000;
    this.#o.reconcileMetrics?.observe(outcome, seconds);
    log.debug({ outcome, seconds }, 'reconciled');
  }
}
