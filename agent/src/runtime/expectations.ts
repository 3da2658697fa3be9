import { systemClock, type Clock } from './clock.js';
import type { KubeObject } from './kube-object.js';

export interface ExpectationsOptions {
  /**
   * After this long an unobserved expectation is given up (default 5 min): a watch event can be
   * lost for good (e.g. an object created and deleted while the watch was down), and waiting
   * forever would wedge the controller.
   */
  timeoutMs?: number;
  clock?: Clock;
  /** Told about expectations given up on timeout, e.g. to log them. */
  onExpired?: (controllerKey: string, expired: string[]) => void;
}

const DEFAULT_TIMEOUT_MS = 5 * 60_000;

/**
 * Creations and deletions a controller has asked for and not yet seen in its cache, by controller
 * key and pod name (OpenKruise's ScaleExpectations). The controller records names *before*
 * writing, informer handlers observe them, and the controller skips scaling while unsatisfied, so
 * a cache that lags behind its own writes never makes it create or delete a pod twice.
 */
export class ScaleExpectations {
  readonly #byKey = new Map<string, { creations: Map<string, number>; deletions: Map<string, number> }>();
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  readonly #onExpired: ExpectationsOptions['onExpired'];

  constructor(options: ExpectationsOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#clock = options.clock ?? systemClock;
    this.#onExpired = options.onExpired;
  }

  /** Records pods about to be created for `controllerKey`. Call before the create requests. */
  expectCreations(controllerKey: string, names: readonly string[]): void {
    const now = this.#clock.now();
    for (const name of names) this.#entry(controllerKey).creations.set(name, now);
  }

  /** Records pods about to be deleted for `controllerKey`. Call before the delete requests. */
  expectDeletions(controllerKey: string, names: readonly string[]): void {
    const now = this.#clock.now();
    for (const name of names) this.#entry(controllerKey).deletions.set(name, now);
  }

  /** An informer saw pod `name` appear. Unexpected names are ignored. */
  creationObserved(controllerKey: string, name: string): void {
    this.#byKey.get(controllerKey)?.creations.delete(name);
    this.#prune(controllerKey);
  }

  /** An informer saw pod `name` go (or get a deletionTimestamp). */
  deletionObserved(controllerKey: string, name: string): void {
    this.#byKey.get(controllerKey)?.deletions.delete(name);
    this.#prune(controllerKey);
  }

  /** Forgets expectations whose write failed, so nothing waits for an event that never comes. */
  lowerExpectations(
    controllerKey: string,
    failed: { creations?: readonly string[]; deletions?: readonly string[] },
  ): void {
    const entry = this.#byKey.get(controllerKey);
    for (const name of failed.creations ?? []) entry?.creations.delete(name);
    for (const name of failed.deletions ?? []) entry?.deletions.delete(name);
    this.#prune(controllerKey);
  }

  /**
   * True when every expected creation and deletion was observed. Expectations older than the
   * timeout are dropped (and reported to onExpired) and count as met.
   */
  satisfied(controllerKey: string): boolean {
    const entry = this.#byKey.get(controllerKey);
    if (!entry) return true;
    const expired = [
      ...dropOlder(entry.creations, this.#clock.now() - this.#timeoutMs).map((n) => `create ${n}`),
      ...dropOlder(entry.deletions, this.#clock.now() - this.#timeoutMs).map((n) => `delete ${n}`),
    ];
    if (expired.length > 0) this.#onExpired?.(controllerKey, expired);
    this.#prune(controllerKey);
    return !this.#byKey.has(controllerKey);
  }

  /** What is still expected for `controllerKey`, for logs and status. */
  pending(controllerKey: string): { creations: string[]; deletions: string[] } {
    const entry = this.#byKey.get(controllerKey);
    return { creations: [...(entry?.creations.keys() ?? [])], deletions: [...(entry?.deletions.keys() ?? [])] };
  }

  /** Forgets everything about `controllerKey`, e.g. when the controller object is deleted. */
  delete(controllerKey: string): void {
    this.#byKey.delete(controllerKey);
  }

  #entry(key: string): { creations: Map<string, number>; deletions: Map<string, number> } {
    let entry = this.#byKey.get(key);
    if (!entry) this.#byKey.set(key, (entry = { creations: new Map(), deletions: new Map() }));
    return entry;
  }

  #prune(key: string): void {
    const entry = this.#byKey.get(key);
    if (entry && entry.creations.size === 0 && entry.deletions.size === 0) this.#byKey.delete(key);
  }
}

/**
 * Objects a controller has written, by controller key, until the cache shows them at least at the
 * resourceVersion the write returned (OpenKruise's ResourceVersionExpectation). Acting before
 * then would mean deciding on objects older than the controller's own last change.
 *
 * resourceVersions are compared numerically when both are decimal (etcd's are), by equality
 * otherwise — so with an exotic storage the expectation is met only by the exact version.
 */
export class ResourceVersionExpectations {
  /** controller key → object uid → expected version and when it was recorded */
  readonly #byKey = new Map<string, Map<string, { resourceVersion: string; at: number }>>();
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  readonly #onExpired: ExpectationsOptions['onExpired'];

  constructor(options: ExpectationsOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#clock = options.clock ?? systemClock;
    this.#onExpired = options.onExpired;
  }

  /** Records `obj` as the write's result (its uid and the resourceVersion returned). */
  expectUpdated(controllerKey: string, obj: KubeObject): void {
    const uid = obj.metadata?.uid;
    const resourceVersion = obj.metadata?.resourceVersion;
    if (!uid || !resourceVersion) return;
    const objects = this.#byKey.get(controllerKey) ?? new Map<string, { resourceVersion: string; at: number }>();
    this.#byKey.set(controllerKey, objects);
    const known = objects.get(uid);
    if (known && isAtLeast(known.resourceVersion, resourceVersion)) return;
    objects.set(uid, { resourceVersion, at: this.#clock.now() });
  }

  /** An informer saw `obj`; expectations it meets are cleared for every controller key. */
  observed(obj: KubeObject): void {
    const uid = obj.metadata?.uid;
    const resourceVersion = obj.metadata?.resourceVersion;
    if (!uid || !resourceVersion) return;
    for (const [key, objects] of this.#byKey) {
      const expected = objects.get(uid);
      if (expected && isAtLeast(resourceVersion, expected.resourceVersion)) objects.delete(uid);
      if (objects.size === 0) this.#byKey.delete(key);
    }
  }

  /** `obj` was deleted: nothing will ever show a newer version of it. */
  deleted(obj: KubeObject): void {
    const uid = obj.metadata?.uid;
    if (!uid) return;
    for (const [key, objects] of this.#byKey) {
      objects.delete(uid);
      if (objects.size === 0) this.#byKey.delete(key);
    }
  }

  /** True when the cache caught up with every write recorded for `controllerKey` (or they timed out). */
  isSatisfied(controllerKey: string): boolean {
    const objects = this.#byKey.get(controllerKey);
    if (!objects) return true;
    const cutoff = this.#clock.now() - this.#timeoutMs;
    const expired: string[] = [];
    for (const [uid, e] of objects) {
      if (e.at <= cutoff) {
        objects.delete(uid);
        expired.push(`${uid}@${e.resourceVersion}`);
      }
    }
    if (expired.length > 0) this.#onExpired?.(controllerKey, expired);
    if (objects.size === 0) this.#byKey.delete(controllerKey);
    return !this.#byKey.has(controllerKey);
  }

  delete(controllerKey: string): void {
    this.#byKey.delete(controllerKey);
  }
}

/** Whether resourceVersion `a` is the same as or newer than `b`. */
export function isAtLeast(a: string, b: string): boolean {
  const decimal = /^\d+$/;
  if (decimal.test(a) && decimal.test(b)) return BigInt(a) >= BigInt(b);
  return a === b;
}

function dropOlder(entries: Map<string, number>, cutoff: number): string[] {
  const dropped: string[] = [];
  for (const [name, at] of entries) {
    if (at <= cutoff) {
      entries.delete(name);
      dropped.push(name);
    }
  }
  return dropped;
}
