import { AgentError } from '../errors.js';
import { objectKey, namespacedKey, type KubeObject } from './kube-object.js';
import { toMatcher, type SelectorInput } from './label-selector.js';

/** Maps an object to the index values it is found under (none, one or many). */
export type IndexFunc<T> = (obj: T) => readonly string[];

/** Read-only access to cached objects: what an Informer and an ObjectCache both offer. Never mutate what it returns. */
export interface ReadStore<T> {
  get(namespace: string | undefined, name: string): T | undefined;
  list(namespace?: string, selector?: SelectorInput): T[];
}

/** Lookups by name in a cache (client-go's listers). */
export type Lister<T> = Pick<ReadStore<T>, 'get'>;

/** Index names every cache has. */
export const BY_NAMESPACE = 'byNamespace';
export const BY_OWNER_UID = 'byOwnerUid';
export const BY_NODE_NAME = 'byNodeName';

const builtinIndexers: Record<string, IndexFunc<KubeObject>> = {
  [BY_NAMESPACE]: (obj) => (obj.metadata?.namespace ? [obj.metadata.namespace] : []),
  [BY_OWNER_UID]: (obj) => obj.metadata?.ownerReferences?.map((ref) => ref.uid) ?? [],
  [BY_NODE_NAME]: (obj) => {
    const nodeName = (obj as { spec?: { nodeName?: unknown } }).spec?.nodeName;
    return typeof nodeName === 'string' && nodeName !== '' ? [nodeName] : [];
  },
};

/** What replace() changed, in the order handlers should hear about it. */
export interface ReplaceDiff<T> {
  added: T[];
  /** Objects whose resourceVersion changed. */
  updated: { old: T; obj: T }[];
  /** Objects that vanished: their last known state. */
  deleted: T[];
}

/**
 * An indexed in-memory store of objects by `namespace/name`, with the built-in indexes
 * byNamespace, byOwnerUid and byNodeName plus any registered by name. It stores the objects it is
 * given as they are: callers must never mutate them (the informer freezes them).
 */
export class ObjectCache<T extends KubeObject> {
  readonly #items = new Map<string, T>();
  readonly #indexers = new Map<string, IndexFunc<T>>();
  /** index name → index value → object keys */
  readonly #indexes = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    for (const [name, fn] of Object.entries(builtinIndexers)) this.addIndexer(name, fn);
    for (const [name, fn] of Object.entries(indexers)) this.addIndexer(name, fn);
  }

  /** Registers an index; objects already stored are indexed at once. Names must be unique. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (this.#indexers.has(name)) throw new AgentError('AGENT_ERR_INDEXER', `indexer ${name} already exists`);
    this.#indexers.set(name, fn);
    this.#indexes.set(name, new Map());
    for (const [key, obj] of this.#items) this.#indexOne(name, fn, key, obj);
  }

  hasIndexer(name: string): boolean {
    return this.#indexers.has(name);
  }

  get size(): number {
    return this.#items.size;
  }

  /** The object stored under `key` (`namespace/name` or a cluster-scoped `name`). */
  getByKey(key: string): T | undefined {
    return this.#items.get(key);
  }

  /** The object `namespace/name`; pass an undefined or empty namespace for cluster-scoped objects. */
  get(namespace: string | undefined, name: string): T | undefined {
    return this.#items.get(namespacedKey(namespace, name));
  }

  keys(): string[] {
    return [...this.#items.keys()];
  }

  /** Objects in `namespace` (all namespaces when undefined) whose labels match `selector`. */
  list(namespace?: string, selector?: SelectorInput): T[] {
    const candidates = namespace ? this.byIndex(BY_NAMESPACE, namespace) : [...this.#items.values()];
    if (selector === undefined) return candidates;
    const matches = toMatcher(selector);
    return candidates.filter((obj) => matches(obj.metadata?.labels));
  }

  /** Objects whose index `index` contains `value`. Throws for an unknown index name. */
  byIndex(index: string, value: string): T[] {
    const idx = this.#indexes.get(index);
    if (!idx) throw new AgentError('AGENT_ERR_INDEXER', `no indexer named ${index}`);
    return [...(idx.get(value) ?? [])].map((key) => this.#items.get(key)!);
  }

  /** Stores `obj` and returns what was stored under its key before. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.#items.get(key);
    if (old) this.#unindex(key, old);
    this.#items.set(key, obj);
    for (const [name, fn] of this.#indexers) this.#indexOne(name, fn, key, obj);
    return old;
  }

  /** Removes the object under `key` and returns it. */
  remove(key: string): T | undefined {
    const old = this.#items.get(key);
    if (!old) return undefined;
    this.#unindex(key, old);
    this.#items.delete(key);
    return old;
  }

  /** Makes the cache hold exactly `objects` (a relist) and reports the difference. */
  replace(objects: readonly T[]): ReplaceDiff<T> {
    const diff: ReplaceDiff<T> = { added: [], updated: [], deleted: [] };
    const seen = new Set<string>();
    for (const obj of objects) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.upsert(obj);
      if (!old) diff.added.push(obj);
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) diff.updated.push({ old, obj });
    }
    for (const key of [...this.#items.keys()]) {
      if (!seen.has(key)) diff.deleted.push(this.remove(key)!);
    }
    return diff;
  }

  #indexOne(name: string, fn: IndexFunc<T>, key: string, obj: T): void {
    const idx = this.#indexes.get(name)!;
    for (const value of fn(obj)) {
      let keys = idx.get(value);
      if (!keys) idx.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  #unindex(key: string, obj: T): void {
    for (const [name, fn] of this.#indexers) {
      const idx = this.#indexes.get(name)!;
      for (const value of fn(obj)) {
        const keys = idx.get(value);
        keys?.delete(key);
        if (keys?.size === 0) idx.delete(value);
      }
    }
  }
}
