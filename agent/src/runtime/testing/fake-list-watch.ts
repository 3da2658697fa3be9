import { AgentError } from '../../errors.js';
import { objectKey, type KubeObject } from '../kube-object.js';
import type { ListOptions, ListPage, ListWatcher, WatchEvent, WatchOptions, WatchStream } from '../list-watch.js';

interface OpenWatch {
  options: WatchOptions;
  close(err?: unknown): void;
}

/**
 * An in-memory apiserver for one resource, for informer and controller tests: objects get
 * increasing resourceVersions, watches replay history after their resourceVersion, and tests can
 * compact history (410 Gone), break open watches, or make the next list/watch fail.
 */
export class FakeListWatcher implements ListWatcher {
  readonly description: string;
  readonly #objects = new Map<string, KubeObject>();
  readonly #history: { rv: number; event: WatchEvent }[] = [];
  readonly #watches = new Set<OpenWatch>();
  #rv = 100;
  #compactedRv = 0;
  #listFailures: Error[] = [];
  #watchFailures: Error[] = [];
  /** Calls made, for assertions. */
  readonly calls = { list: 0, watch: 0, watchResourceVersions: [] as string[] };

  constructor(
    private readonly listKind = 'PodList',
    private readonly listApiVersion = 'v1',
  ) {
    this.description = `fake ${listKind}`;
  }

  /** Number of watch streams currently open. */
  openWatches(): number {
    return this.#watches.size;
  }

  currentResourceVersion(): string {
    return String(this.#rv);
  }

  /** Creates or replaces an object (ADDED or MODIFIED) and returns the stored copy. */
  upsert(obj: KubeObject): KubeObject {
    const key = objectKey(obj);
    const type = this.#objects.has(key) ? 'MODIFIED' : 'ADDED';
    const stored = structuredClone(obj);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.#rv) };
    stored.metadata.uid ??= `uid-${key}`;
    this.#objects.set(key, stored);
    this.#publish({ type, object: stored });
    return stored;
  }

  /** Deletes an object (DELETED). */
  delete(namespace: string | undefined, name: string): void {
    const key = namespace ? `${namespace}/${name}` : name;
    const old = this.#objects.get(key);
    if (!old) return;
    this.#objects.delete(key);
    this.#publish({
      type: 'DELETED',
      object: { ...old, metadata: { ...old.metadata, resourceVersion: String(++this.#rv) } },
    });
  }

  /** Sends a BOOKMARK at the current resourceVersion to open watches. */
  bookmark(): void {
    this.#publish({ type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: String(this.#rv) } } });
  }

  /** Forgets history: watches from an older resourceVersion get 410 Gone, as after etcd compaction. */
  compact(): void {
    this.#compactedRv = this.#rv;
    this.#history.length = 0;
  }

  /** Ends every open watch: cleanly, or with `err` as a transport failure. */
  breakWatches(err?: unknown): void {
    for (const w of [...this.#watches]) w.close(err);
  }

  /** Sends an ERROR event with this Status code to open watches; the server then closes them. */
  sendError(code: number, reason = 'Expired'): void {
    for (const w of [...this.#watches]) {
      w.options.onEvent({ type: 'ERROR', object: { kind: 'Status', code, reason, message: `error ${code}` } });
      w.close();
    }
  }

  failNextList(err: Error = new AgentError('AGENT_ERR_LIST', 'injected list failure')): void {
    this.#listFailures.push(err);
  }

  failNextWatch(err: Error = new AgentError('AGENT_ERR_WATCH', 'injected watch failure')): void {
    this.#watchFailures.push(err);
  }

  list(options: ListOptions): Promise<ListPage> {
    this.calls.list++;
    const failure = this.#listFailures.shift();
    if (failure !== undefined) return Promise.reject(failure);
    const all = [...this.#objects.values()].map((o) => {
      // Like the apiserver, list items carry no apiVersion/kind of their own.
      const { apiVersion: _a, kind: _k, ...rest } = structuredClone(o);
      return rest;
    });
    const start = options.continue ? Number(options.continue) : 0;
    const end = options.limit ? start + options.limit : all.length;
    return Promise.resolve({
      apiVersion: this.listApiVersion,
      kind: this.listKind,
      items: all.slice(start, end),
      resourceVersion: String(this.#rv),
      ...(end < all.length ? { continue: String(end) } : {}),
    });
  }

  watch(options: WatchOptions): Promise<WatchStream> {
    this.calls.watch++;
    this.calls.watchResourceVersions.push(options.resourceVersion);
    const failure = this.#watchFailures.shift();
    if (failure !== undefined) return Promise.reject(failure);
    let settle!: { resolve: () => void; reject: (err: unknown) => void };
    const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    const open: OpenWatch = {
      options,
      close: (err?: unknown) => {
        if (!this.#watches.delete(open)) return;
        if (err === undefined) settle.resolve();
        else settle.reject(err);
      },
    };
    this.#watches.add(open);
    const from = Number(options.resourceVersion);
    if (from < this.#compactedRv) {
      options.onEvent({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } });
      open.close();
    } else {
      for (const h of this.#history) if (h.rv > from) options.onEvent(structuredClone(h.event));
    }
    return Promise.resolve({ done, abort: () => open.close() });
  }

  #publish(event: WatchEvent): void {
    const rv = Number((event.object as KubeObject).metadata?.resourceVersion);
    if (event.type !== 'BOOKMARK') this.#history.push({ rv, event });
    for (const w of this.#watches) w.options.onEvent(structuredClone(event));
  }
}
