import type { KubeCredentials } from './kubeconfig/index.js';
import { AgentError, KubeApiError } from '../errors.js';
import type { ListOptions, ListPage, ListWatcher, WatchOptions, WatchStream } from './list-watch.js';
import { resourcePath, type ResourceRef } from './resource.js';
import { createKubeRest, type KubeRest, type KubeRestClient } from './rest.js';
import { WatchDecoder } from './watch-decoder.js';

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
 * List and watch through the raw JSON client (no Date objects, no dropped fields). A watch is a
 * streaming GET on a kept-alive connection of its own, decoded line by line (watch-decoder.ts),
 * with bookmarks and a server-side timeout; every line that is not a whole event fails the watch
 * (the informer resumes from the last version it saw) instead of being skipped.
 */
export function kubeListWatcher(
  kc: KubeCredentials,
  rest: KubeRest,
  ref: ResourceRef,
  options: KubeListWatchOptions = {},
): ListWatcher {
  const streams = streamingClient(kc, rest);
  const path = resourcePath(ref, options.namespace);
  const selectors = { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
  const filters = [options.labelSelector, options.fieldSelector].filter(Boolean).join('; ');
  return {
    description: `${ref.plural}${options.namespace ? ` in ${options.namespace}` : ''}${filters ? ` (${filters})` : ''}`,
    // List pages and watch events are parsed from the wire by us and handed to nobody else.
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
      const decoder = new WatchDecoder((event) => opts.onEvent(event));
      const query = {
        ...selectors,
        watch: true,
        resourceVersion: opts.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: opts.timeoutSeconds,
      };
      let stream;
      try {
        stream = await streams.stream({ method: 'GET', path, query }, (chunk) => decoder.write(chunk));
      } catch (err) {
        throw watchError(path, err);
      }
      let aborted = false;
      const done = stream.done.then(
        () => {
          // A clean end: a last event without its newline still counts; a truncated one fails.
          if (!aborted) decoder.end();
        },
        (err: unknown) => {
          throw watchError(path, err);
        },
      );
      return {
        done,
        abort: () => {
          aborted = true;
          stream.abort();
        },
      };
    },
  };
}

/** Clients made for a kubeconfig whose KubeRest cannot stream (a test double): one per kubeconfig. */
const fallbackClients = new WeakMap<KubeCredentials, KubeRestClient>();

function streamingClient(kc: KubeCredentials, rest: KubeRest): Pick<KubeRestClient, 'stream'> {
  if (typeof (rest as Partial<KubeRestClient>).stream === 'function') return rest as KubeRestClient;
  let client = fallbackClients.get(kc);
  if (!client) fallbackClients.set(kc, (client = createKubeRest(kc)));
  return client;
}

/** Failures of the watch request: HTTP statuses stay KubeApiError (410 is expiry), the rest is coded. */
function watchError(path: string, err: unknown): Error {
  if (err instanceof KubeApiError) return err;
  if (err instanceof AgentError && err.code === 'AGENT_ERR_WATCH') return err;
  const message = err instanceof Error ? err.message : String(err);
  return new AgentError('AGENT_ERR_WATCH', `watch ${path}: ${message}`, { cause: err });
}
