import type { Logger } from 'pino';
import { isKubeStatus } from '../errors.js';
import { systemClock, type Clock } from './clock.js';
import type { KubeObject } from './kube-object.js';
import { formatTime } from './kube-time.js';
import { PatchType, type KubeRest } from './rest.js';
import { resourcePath, Resources } from './resource.js';

export type EventType = 'Normal' | 'Warning';

/** corev1.ObjectReference of the object an event is about. */
export interface InvolvedObject {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

/** core/v1 Event, as written. */
export interface CoreEvent extends KubeObject {
  involvedObject: InvolvedObject;
  reason: string;
  message: string;
  type: EventType;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component: string; host?: string };
  reportingComponent: string;
  reportingInstance: string;
}

/** Where events go; kubeEventSink writes them to the apiserver. */
export interface EventSink {
  create(namespace: string, event: CoreEvent): Promise<unknown>;
  /** Merge-patches `count` and `lastTimestamp` of an existing event. */
  patch(namespace: string, name: string, patch: Pick<CoreEvent, 'count' | 'lastTimestamp'>): Promise<unknown>;
}

/** An EventSink over the raw JSON API. */
export function kubeEventSink(rest: KubeRest): EventSink {
  const ref = Resources.events;
  return {
    create: (namespace, event) => rest.request({ method: 'POST', path: resourcePath(ref, namespace), body: event }),
    patch: (namespace, name, patch) =>
      rest.request({
        method: 'PATCH',
        path: resourcePath(ref, namespace, name),
        body: patch,
        contentType: PatchType.merge,
      }),
  };
}

export interface EventRecorderOptions {
  sink: EventSink;
  /** `source.component` and `reportingComponent`, e.g. `flotilla-agent/cloneset`. */
  component: string;
  /** `source.host` and `reportingInstance`, e.g. the pod name. */
  instance: string;
  logger: Logger;
  clock?: Clock;
  /** Events per involved object allowed in a burst; default 25 (client-go's spam filter). */
  burst?: number;
  /** One more event per involved object every this many ms; default 5 min. */
  refillMs?: number;
  /** A repeat within this window increments the existing event's count; default 10 min. */
  aggregateWindowMs?: number;
  /** Events not yet written above this are dropped, bounding memory when the API is slow; default 1000. */
  maxPending?: number;
  /** Remembered events and rate limiters; the oldest are forgotten beyond this; default 4096. */
  cacheSize?: number;
}

const MAX_MESSAGE = 1024;

/**
 * Records core/v1 Events about objects. Repeats of the same event (object, type, reason, message)
 * within the aggregation window bump `count` and `lastTimestamp` of the event already written
 * instead of creating new ones; each involved object gets a token bucket so a hot loop can't
 * flood the apiserver. event() never throws and never waits: writes happen in order in the
 * background and failures are logged.
 */
export class EventRecorder {
  readonly #o: EventRecorderOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  /** aggregation key → the event written for it */
  readonly #written = new Map<string, { namespace: string; name: string; count: number; lastMs: number }>();
  /** involved object → token bucket */
  readonly #buckets = new Map<string, { tokens: number; lastMs: number }>();
  #chain: Promise<void> = Promise.resolve();
  #pending = 0;
  #seq = 0;

  constructor(options: EventRecorderOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.logger.child({ component: 'events' });
  }

  /** Records an event about `obj`. Never throws. */
  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    try {
      const ref = involvedObjectOf(obj);
      if (this.#pending >= (this.#o.maxPending ?? 1000)) {
        this.#log.warn({ reason, object: ref }, 'event dropped: too many events waiting to be written');
        return;
      }
      if (!this.#take(`${ref.kind}/${ref.namespace}/${ref.name}/${ref.uid}`)) {
        this.#log.debug({ reason, object: ref }, 'event dropped by rate limit');
        return;
      }
      const text = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message;
      const aggregateKey = [ref.kind, ref.namespace, ref.name, ref.uid, type, reason, text].join('\u0000');
      this.#pending++;
      this.#chain = this.#chain
        .then(() => this.#write(aggregateKey, ref, type, reason, text))
        .catch((err: unknown) => this.#log.warn({ err, reason, object: ref }, 'could not record event'))
        .finally(() => this.#pending--);
    } catch (err) {
      this.#log.warn({ err, reason }, 'could not record event');
    }
  }

  /** Resolves when every event recorded so far has been written (or has failed). */
  flush(): Promise<void> {
    return this.#chain;
  }

  async #write(
    aggregateKey: string,
    ref: InvolvedObject,
    type: EventType,
    reason: string,
    message: string,
  ): Promise<void> {
    const nowMs = this.#clock.now();
    const seen = this.#written.get(aggregateKey);
    if (seen && nowMs - seen.lastMs < (this.#o.aggregateWindowMs ?? 10 * 60_000)) {
      try {
        await this.#o.sink.patch(seen.namespace, seen.name, {
          count: seen.count + 1,
          lastTimestamp: formatTime(nowMs),
        });
        seen.count++;
        seen.lastMs = nowMs;
        return;
      } catch (err) {
        // The event may have expired (events live 1 h by default): write a new one instead.
        if (!isKubeStatus(err, 404)) throw err;
      }
    }
    const namespace = ref.namespace || 'default';
    const name = this.#eventName(ref.name ?? 'unknown', nowMs);
    const now = formatTime(nowMs);
    await this.#o.sink.create(namespace, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: ref,
      reason,
      message,
      type,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: this.#o.component, host: this.#o.instance },
      reportingComponent: this.#o.component,
      reportingInstance: this.#o.instance,
    });
    remember(this.#written, aggregateKey, { namespace, name, count: 1, lastMs: nowMs }, this.#cacheSize());
  }

  /** client-go's `<object name>.<hex nanoseconds>`, made unique within this process. */
  #eventName(objectName: string, nowMs: number): string {
    const nanos = BigInt(nowMs) * 1_000_000n + BigInt(this.#seq++ % 1_000_000);
    return `${objectName.slice(0, 253 - 17)}.${nanos.toString(16)}`;
  }

  #take(key: string): boolean {
    const nowMs = this.#clock.now();
    const burst = this.#o.burst ?? 25;
    const refillMs = this.#o.refillMs ?? 5 * 60_000;
    const bucket = this.#buckets.get(key) ?? { tokens: burst, lastMs: nowMs };
    bucket.tokens = Math.min(burst, bucket.tokens + (nowMs - bucket.lastMs) / refillMs);
    bucket.lastMs = nowMs;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    remember(this.#buckets, key, bucket, this.#cacheSize());
    return allowed;
  }

  #cacheSize(): number {
    return this.#o.cacheSize ?? 4096;
  }
}

/** What records events: an EventRecorder, or a fake in tests. */
export type EventRecording = Pick<EventRecorder, 'event'>;

/** The object an ObjectReference names (a tag's owner, say), as `event()` takes it. */
export function referencedObject(ref: InvolvedObject): KubeObject {
  return {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: { name: ref.name, namespace: ref.namespace, uid: ref.uid },
  };
}

/** The ObjectReference written into an event for `obj`. */
export function involvedObjectOf(obj: KubeObject): InvolvedObject {
  const m = obj.metadata ?? {};
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: m.name,
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
  };
}

/** Map insertion order doubles as recency: re-inserting moves a key to the end, the oldest go first. */
function remember<V>(map: Map<string, V>, key: string, value: V, limit: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > limit) map.delete(map.keys().next().value!);
}
