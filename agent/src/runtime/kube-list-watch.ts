import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { AgentError, KubeApiError } from '../errors.js';
import type { ListOptions, ListPage, ListWatcher, WatchOptions, WatchStream } from './list-watch.js';
import { resourcePath, type ResourceRef } from './resource.js';
import type { KubeRest } from './rest.js';

/** What to list and watch: one namespace (all when undefined), optionally filtered server-side. */
export interface KubeListWatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

interface ListBody {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: unknown[];
}

/**
 * List through the raw JSON client (no Date objects, no dropped fields) and watch through
 * @kubernetes/client-node's Watch stream, with bookmarks and a server-side timeout. Only the
 * stream is used from the library: its informer stops on the first non-410 error.
 */
export function kubeListWatcher(
  kc: KubeConfig,
  rest: KubeRest,
  ref: ResourceRef,
  options: KubeListWatchOptions = {},
): ListWatcher {
  const path = resourcePath(ref, options.namespace);
  const selectors = { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
  const filters = [options.labelSelector, options.fieldSelector].filter(Boolean).join('; ');
  return {
    description: `${ref.plural}${options.namespace ? ` in ${options.namespace}` : ''}${filters ? ` (${filters})` : ''}`,
    // List pages come from rest.ts's JSON.parse, watch events from the Watch's JSON.parse per line.
    freshJson: true,

    async list(opts: ListOptions): Promise<ListPage> {
      const body = await rest.request<ListBody>({
        method: 'GET',
        path,
        query: { ...selectors, limit: opts.limit, continue: opts.continue },
        signal: opts.signal,
      });
      return {
        apiVersion: body.apiVersion,
        kind: body.kind,
        items: body.items ?? [],
        resourceVersion: body.metadata?.resourceVersion ?? '',
        continue: body.metadata?.continue || undefined,
      };
    },

    async watch(opts: WatchOptions): Promise<WatchStream> {
      let aborted = false;
      let settle!: { resolve: () => void; reject: (err: Error) => void };
      const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
      const query = {
        ...selectors,
        resourceVersion: opts.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: opts.timeoutSeconds,
      };
      const onDone = (err: unknown): void => {
        if (err === null || err === undefined || aborted) settle.resolve();
        else settle.reject(watchError(path, err));
      };
      let controller: AbortController;
      try {
        controller = await new Watch(kc).watch(
          path,
          query,
          (type: string, object: unknown) => opts.onEvent({ type, object }),
          onDone,
        );
      } catch (err) {
        throw watchError(path, err);
      }
      return {
        done,
        abort: () => {
          aborted = true;
          controller.abort();
        },
      };
    },
  };
}

/** HTTP failures of the watch request become KubeApiError so 410 is recognised as expiry. */
function watchError(path: string, err: unknown): Error {
  const status = (err as { statusCode?: unknown }).statusCode;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof status === 'number')
    return new KubeApiError(status, `watch ${path}: ${status} ${message}`, {}, { cause: err });
  return new AgentError('AGENT_ERR_WATCH', `watch ${path}: ${message}`, { cause: err });
}
