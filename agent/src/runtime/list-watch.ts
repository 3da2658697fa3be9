/**
 * The two API calls an informer makes, behind an interface so the informer's state machine
 * (relist, resume, backoff) is tested against an in-memory fake and runs against the apiserver
 * through kube-list-watch.ts.
 */

export interface ListOptions {
  /** Page size; the informer pages through large lists. */
  limit?: number;
  /** Continue token of the previous page. */
  continue?: string;
  signal?: AbortSignal;
}

/** One page of a list response, as plain JSON. */
export interface ListPage {
  /** The list's apiVersion and kind (`v1`, `PodList`); items often lack their own. */
  apiVersion?: string;
  kind?: string;
  items: unknown[];
  resourceVersion: string;
  continue?: string;
}

/** One line of a watch stream: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR (then `object` is a Status). */
export interface WatchEvent {
  type: string;
  object: unknown;
}

export interface WatchOptions {
  /** Resume after this resourceVersion (the list's, or the last event's or bookmark's). */
  resourceVersion: string;
  /** Asks the server to end the stream cleanly after this long. */
  timeoutSeconds: number;
  /** Called for every event, in order. */
  onEvent(event: WatchEvent): void;
}

/** An open watch stream. */
export interface WatchStream {
  /**
   * Settles when the stream ends: resolves on a clean close by the server or after abort(),
   * rejects on a transport or HTTP error (a KubeApiError for HTTP statuses).
   */
  readonly done: Promise<void>;
  /** Closes the stream; `done` then resolves. */
  abort(): void;
}

/** List and watch one resource, with its namespace and selectors already applied. */
export interface ListWatcher {
  /** For logs: e.g. `pods in ns-1 (app=web)`. */
  readonly description: string;
  /**
   * Objects handed out are freshly parsed JSON that nobody else holds: the informer may transform
   * and freeze them as they are instead of copying them first (a copy per watch event is a good
   * part of an agent's CPU and garbage during a scale-up). Fakes that share objects leave it unset.
   */
  readonly freshJson?: boolean;
  list(options: ListOptions): Promise<ListPage>;
  watch(options: WatchOptions): Promise<WatchStream>;
}
