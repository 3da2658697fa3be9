import { sleep } from '@flotilla/api';
import type { Logger } from 'pino';
import { AgentError, hasCode, isKubeStatus } from '../errors.js';
import { backoffDelay, type BackoffOptions } from './backoff.js';
import { ObjectCache, type IndexFunc } from './cache.js';
import { systemClock, type Clock, type Timer } from './clock.js';
import { deepFreeze, objectKey, toPlainJson, type KubeObject } from './kube-object.js';
import type { SelectorInput } from './label-selector.js';
import type { ListPage, ListWatcher, WatchEvent, WatchStream } from './list-watch.js';

/** Details of a delete notification. */
export interface DeleteInfo {
  /**
   * True when the object vanished while the watch was down and was only noticed by a relist: the
   * object passed is the last state the cache knew, not its state at deletion (client-go's
   * DeletedFinalStateUnknown tombstone).
   */
  finalStateUnknown: boolean;
}

/**
 * Callbacks for cache changes. They run synchronously after the cache was updated, so a lister
 * read inside them sees the new state; they should only enqueue keys and note expectations.
 * Objects passed in are the cached ones: never mutate them.
 */
export interface EventHandler<T> {
  onAdd?(obj: T): void;
  /** Also called with old === new on a periodic resync. */
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T, info: DeleteInfo): void;
}

/** What an informer reports; implemented with prom-client in metrics.ts. */
export interface InformerMetrics {
  /** A list after the first one: after 410 Gone, on request, or on the relist timer. */
  incRelists(): void;
  /** A list or watch failure that made the informer back off and start over. */
  incRestarts(): void;
  /**
   * A watch request: the first, and each resume after the apiserver ended one (its timeout, or a
   * watcher that fell behind a burst of events), which replays from the last resourceVersion.
   */
  incWatches(): void;
}

export interface InformerOptions<T> {
  /** For logs and metrics, e.g. `pods`. */
  name: string;
  listWatch: ListWatcher;
  logger: Logger;
  clock?: Clock;
  metrics?: InformerMetrics;
  indexers?: Record<string, IndexFunc<T>>;
  /** Replays every cached object to onUpdate this often (ms); 0 or undefined: never. */
  resyncMs?: number;
  /** Lists everything anew this often (ms), to heal any event a watch may have missed; 0: never. */
  relistMs?: number;
  /** List page size. */
  pageSize?: number;
  /** Restart backoff after failures; default 800 ms doubling to 30 s, with full jitter. */
  backoff?: BackoffOptions;
  /** Watches are asked to end after a random time in [t, 2t) seconds, as client-go does; default 300. */
  watchTimeoutSeconds?: number;
  /** Deep-freezes cached objects so a mutation throws at its source; default true. */
  freeze?: boolean;
  /**
   * Applied to every object from list and watch before it is cached and handed to handlers
   * (client-go's SetTransform), to drop what no reader needs; see transform.ts.
   */
  transform?: (obj: T) => T;
  random?: () => number;
  /** Told of every list that succeeded (no argument) and every list/watch failure. */
  onReadResult?: (err?: unknown) => void;
}

const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 800, maxMs: 30_000, factor: 2, jitter: 1 };
/** A watch that ends cleanly sooner than this without any event is counted as a failure. */
const MIN_PRODUCTIVE_WATCH_MS = 1000;
/** Grace on top of the watch timeout before a silent stream is considered dead. */
const IDLE_GRACE_MS = 60_000;

/**
 * Keeps an indexed cache of one resource in step with the apiserver and tells handlers what
 * changed: list, then watch from the list's resourceVersion (with bookmarks) and resume from the
 * last seen version after a clean close. A 410 Gone relists at once; any other failure of list or
 * watch restarts after an exponential, jittered, capped backoff — the informer never gives up
 * until stop(). Objects vanished across a relist are reported as deletes with finalStateUnknown.
 *
 * Cached objects are shared and frozen: callers must copy (structuredClone) before modifying.
 */
export class Informer<T extends KubeObject = KubeObject> {
  readonly name: string;
  readonly #lw: ListWatcher;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #metrics: InformerMetrics | undefined;
  readonly #cache: ObjectCache<T>;
  readonly #handlers = new Set<EventHandler<T>>();
  readonly #options: InformerOptions<T>;
  readonly #random: () => number;
  readonly #stop = new AbortController();
  #syncWaiters: { resolve: () => void; reject: (err: Error) => void }[] = [];
  #running: Promise<void> | undefined;
  #stream: WatchStream | undefined;
  #timers: Timer[] = [];
  #resourceVersion: string | undefined;
  #synced = false;
  #listCount = 0;
  /** True from a list until the first watch event: an expiry then means relisting alone won't help. */
  #freshList = false;
  #relistRequested = false;

  constructor(options: InformerOptions<T>) {
    this.name = options.name;
    this.#options = options;
    this.#lw = options.listWatch;
    this.#clock = options.clock ?? systemClock;
    this.#metrics = options.metrics;
    this.#random = options.random ?? Math.random;
    this.#log = options.logger.child({ informer: options.name, resource: options.listWatch.description });
    this.#cache = new ObjectCache<T>(options.indexers);
  }

  /** Starts listing and watching in the background; idempotent. */
  start(): void {
    if (this.#running || this.#stop.signal.aborted) return;
    this.#running = this.#run();
    this.#every(this.#options.resyncMs, () => this.#resync());
    this.#every(this.#options.relistMs, () => this.relist());
  }

  /** Stops watching and waits for the background loop to end. The cache keeps its last state. */
  async stop(): Promise<void> {
    if (!this.#stop.signal.aborted) {
      this.#stop.abort();
      this.#stream?.abort();
      for (const t of this.#timers) t.cancel();
      const err = new AgentError('AGENT_ERR_CACHE_SYNC', `informer ${this.name} stopped before it synced`);
      this.#syncWaiters.splice(0).forEach((w) => w.reject(err));
    }
    await this.#running;
  }

  /** True once the first list has been stored and its adds delivered. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** Resolves once synced; rejects with AGENT_ERR_CACHE_SYNC if `signal` aborts or the informer stops first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    if (this.#stop.signal.aborted || signal?.aborted) {
      return Promise.reject(new AgentError('AGENT_ERR_CACHE_SYNC', `informer ${this.name} did not sync`));
    }
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#syncWaiters = this.#syncWaiters.filter((w) => w !== waiter);
        reject(new AgentError('AGENT_ERR_CACHE_SYNC', `informer ${this.name} did not sync in time`));
      };
      // The manager waits for every informer with one signal: leave no listener behind on it.
      const settle = (): void => signal?.removeEventListener('abort', onAbort);
      const waiter = {
        resolve: () => (settle(), resolve()),
        reject: (err: Error) => (settle(), reject(err)),
      };
      this.#syncWaiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Forces a full relist now (the current watch is closed). */
  relist(): void {
    this.#relistRequested = true;
    this.#stream?.abort();
  }

  /** The resourceVersion the next watch resumes from; undefined before the first list. */
  lastSyncResourceVersion(): string | undefined {
    return this.#resourceVersion;
  }

  /**
   * Registers handlers. Objects already cached are delivered to onAdd at once, so a handler
   * registered late still sees everything. Returns a function that unregisters them.
   */
  addEventHandler(handler: EventHandler<T>): () => void {
    this.#handlers.add(handler);
    for (const key of this.#cache.keys()) {
      const obj = this.#cache.getByKey(key)!;
      this.#call('onAdd', () => handler.onAdd?.(obj));
    }
    return () => this.#handlers.delete(handler);
  }

  /** Registers an extra index; see ObjectCache.addIndexer. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (!this.#cache.hasIndexer(name)) this.#cache.addIndexer(name, fn);
  }

  /** The cached object `namespace/name` (namespace undefined for cluster-scoped). Do not mutate. */
  get(namespace: string | undefined, name: string): T | undefined {
    return this.#cache.get(namespace, name);
  }

  /** The cached object under a queue key. Do not mutate. */
  getByKey(key: string): T | undefined {
    return this.#cache.getByKey(key);
  }

  /** Cached objects in `namespace` (all when undefined) matching `selector`. Do not mutate. */
  list(namespace?: string, selector?: SelectorInput): T[] {
    return this.#cache.list(namespace, selector);
  }

  /** Cached objects under index value `value` (e.g. byOwnerUid, a CloneSet's uid). Do not mutate. */
  byIndex(index: string, value: string): T[] {
    return this.#cache.byIndex(index, value);
  }

  keys(): string[] {
    return this.#cache.keys();
  }

  async #run(): Promise<void> {
    let failures = 0;
    while (!this.#stop.signal.aborted) {
      try {
        if (this.#relistRequested || this.#resourceVersion === undefined) await this.#relist();
        if (this.#stop.signal.aborted) break;
        if (await this.#watchOnce()) failures = 0;
        else if (!this.#relistRequested) await this.#backoff(++failures);
      } catch (err) {
        if (this.#stop.signal.aborted) break;
        if (isExpired(err)) {
          this.#log.info({ resourceVersion: this.#resourceVersion }, 'resourceVersion expired; relisting');
          this.#resourceVersion = undefined;
          // A watch from a fresh list's version that expires before any event would spin; back off then.
          if (this.#freshList) await this.#backoff(++failures);
          continue;
        }
        failures++;
        this.#metrics?.incRestarts();
        this.#options.onReadResult?.(err);
        this.#log.warn({ err, attempt: failures }, 'list/watch failed; restarting after backoff');
        await this.#backoff(failures);
      }
    }
  }

  async #relist(): Promise<void> {
    this.#relistRequested = false;
    const items: T[] = [];
    let page: ListPage | undefined;
    do {
      page = await this.#lw.list({
        limit: this.#options.pageSize ?? 500,
        continue: page?.continue,
        signal: this.#stop.signal,
      });
      for (const raw of page.items) items.push(this.#prepare(raw, page));
    } while (page.continue && !this.#stop.signal.aborted);
    if (this.#stop.signal.aborted) return;
    if (this.#listCount++ > 0) this.#metrics?.incRelists();
    this.#freshList = true;
    const diff = this.#cache.replace(items);
    this.#resourceVersion = page.resourceVersion;
    for (const obj of diff.added) this.#emit('onAdd', (h) => h.onAdd?.(obj));
    for (const { old, obj } of diff.updated) this.#emit('onUpdate', (h) => h.onUpdate?.(old, obj));
    for (const obj of diff.deleted) this.#emit('onDelete', (h) => h.onDelete?.(obj, { finalStateUnknown: true }));
    this.#log.debug({ count: items.length, resourceVersion: page.resourceVersion, ...counts(diff) }, 'listed');
    this.#options.onReadResult?.();
    if (!this.#synced) {
      this.#synced = true;
      this.#syncWaiters.splice(0).forEach((w) => w.resolve());
    }
  }

  /**
   * Watches from the current resourceVersion until the stream ends. Returns whether the watch was
   * productive (saw an event or lasted a while); throws what ended it otherwise.
   */
  async #watchOnce(): Promise<boolean> {
    const baseTimeout = this.#options.watchTimeoutSeconds ?? 300;
    const timeoutSeconds = Math.floor(baseTimeout * (1 + this.#random()));
    const startedAt = this.#clock.now();
    this.#metrics?.incWatches();
    let failure: Error | undefined;
    let events = 0;
    // Events may arrive (and fail) before watch() resolves, so the stream lives in a holder.
    const current: { stream?: WatchStream } = {};
    let idle: Timer | undefined;
    const fail = (err: unknown): void => {
      failure ??= asError(err);
      current.stream?.abort();
    };
    // One timer per quiet spell, not one per event: an event only notes its time, and the timer
    // re-arms itself for the rest of the spell (a scale-up brings thousands of events a second).
    const idleLimitMs = timeoutSeconds * 1000 + IDLE_GRACE_MS;
    let lastEventAt = this.#clock.now();
    const armIdleTimer = (delayMs: number): void => {
      idle = this.#clock.setTimer(() => {
        const quietMs = this.#clock.now() - lastEventAt;
        if (quietMs < idleLimitMs) return armIdleTimer(idleLimitMs - quietMs);
        fail(new AgentError('AGENT_ERR_WATCH', `watch of ${this.name} sent nothing for ${timeoutSeconds} s`));
      }, delayMs);
    };
    const stream = await this.#lw.watch({
      resourceVersion: this.#resourceVersion!,
      timeoutSeconds,
      onEvent: (event) => {
        if (failure !== undefined || this.#stop.signal.aborted) return;
        events++;
        if (event.type !== 'ERROR') this.#freshList = false;
        lastEventAt = this.#clock.now();
        try {
          this.#apply(event);
        } catch (err) {
          fail(err);
        }
      },
    });
    current.stream = stream;
    this.#stream = stream;
    if (failure !== undefined || this.#stop.signal.aborted || this.#relistRequested) stream.abort();
    lastEventAt = this.#clock.now();
    armIdleTimer(idleLimitMs);
    try {
      await stream.done;
    } catch (err) {
      failure ??= asError(err);
    } finally {
      idle?.cancel();
      this.#stream = undefined;
    }
    if (failure !== undefined) throw failure;
    return events > 0 || this.#clock.now() - startedAt >= MIN_PRODUCTIVE_WATCH_MS;
  }

  #apply(event: WatchEvent): void {
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const obj = this.#prepare(event.object);
        const old = this.#cache.upsert(obj);
        this.#resourceVersion = obj.metadata?.resourceVersion ?? this.#resourceVersion;
        if (old) this.#emit('onUpdate', (h) => h.onUpdate?.(old, obj));
        else this.#emit('onAdd', (h) => h.onAdd?.(obj));
        return;
      }
      case 'DELETED': {
        const obj = this.#prepare(event.object);
        this.#cache.remove(objectKey(obj));
        this.#resourceVersion = obj.metadata?.resourceVersion ?? this.#resourceVersion;
        this.#emit('onDelete', (h) => h.onDelete?.(obj, { finalStateUnknown: false }));
        return;
      }
      case 'BOOKMARK':
        this.#resourceVersion = (event.object as KubeObject).metadata?.resourceVersion ?? this.#resourceVersion;
        return;
      case 'ERROR':
        throw watchStatusError(event.object);
      default:
        this.#log.warn({ type: event.type }, 'ignoring watch event of unknown type');
    }
  }

  /** Plain JSON, with apiVersion/kind filled from the list (list items often lack them), transformed, frozen. */
  #prepare(raw: unknown, page?: ListPage): T {
    let obj = (this.#lw.freshJson ? raw : toPlainJson(raw)) as T;
    if (page) {
      obj.apiVersion ??= page.apiVersion;
      obj.kind ??= page.kind?.replace(/List$/, '');
    }
    if (this.#options.transform) obj = this.#options.transform(obj);
    return this.#options.freeze === false ? obj : deepFreeze(obj);
  }

  #resync(): void {
    if (!this.#synced) return;
    for (const key of this.#cache.keys()) {
      const obj = this.#cache.getByKey(key)!;
      this.#emit('onUpdate', (h) => h.onUpdate?.(obj, obj));
    }
  }

  #emit(what: string, call: (h: EventHandler<T>) => void): void {
    for (const handler of this.#handlers) this.#call(what, () => call(handler));
  }

  /** A failing handler is logged and never stops the informer or other handlers. */
  #call(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#log.error({ err, handler: what }, 'event handler threw');
    }
  }

  #backoff(attempt: number): Promise<void> {
    const delay = backoffDelay(attempt, this.#options.backoff ?? DEFAULT_BACKOFF, this.#random);
    return sleep(delay, { signal: this.#stop.signal, timers: this.#clock });
  }

  #every(periodMs: number | undefined, fn: () => void): void {
    if (!periodMs || periodMs <= 0) return;
    const arm = (): void => {
      const timer = this.#clock.setTimer(() => {
        this.#timers = this.#timers.filter((t) => t !== timer);
        if (this.#stop.signal.aborted) return;
        fn();
        arm();
      }, periodMs);
      this.#timers.push(timer);
    };
    arm();
  }
}

/** A watch ERROR event's Status as an error: 410 becomes AGENT_ERR_WATCH_EXPIRED. */
function watchStatusError(status: unknown): AgentError {
  const s = (status ?? {}) as { code?: number; reason?: string; message?: string };
  const text = `watch error ${s.code ?? '?'} ${s.reason ?? ''}: ${s.message ?? ''}`.trim();
  return new AgentError(s.code === 410 ? 'AGENT_ERR_WATCH_EXPIRED' : 'AGENT_ERR_WATCH', text);
}

/** True for every way the apiserver says "your resourceVersion is too old". */
export function isExpired(err: unknown): boolean {
  return hasCode(err, 'AGENT_ERR_WATCH_EXPIRED') || isKubeStatus(err, 410);
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new AgentError('AGENT_ERR_WATCH', String(err));
}

function counts<T>(diff: { added: T[]; updated: unknown[]; deleted: T[] }): Record<string, number> {
  return { added: diff.added.length, updated: diff.updated.length, deleted: diff.deleted.length };
}
