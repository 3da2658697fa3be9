/** Shared wiring for the runtime suites: real clients for one test cluster, and a list/watch wrapper tests can break. */
import type { KubeConfig } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import type { Registry } from 'prom-client';
import {
  createKubeRest,
  kubeListWatcher,
  type KubeListWatchOptions,
  type KubeRest,
  type ListOptions,
  type ListPage,
  type ListWatcher,
  type ResourceRef,
  type WatchOptions,
  type WatchStream,
} from '@flotilla/agent/runtime';
import { cluster } from '../helpers/context.js';
import { kube, type Kube } from '../helpers/kube.js';

export interface RuntimeEnv {
  k: Kube;
  kc: KubeConfig;
  rest: KubeRest;
  logger: Logger;
  listWatcher(ref: ResourceRef, options?: KubeListWatchOptions): ListWatcher;
}

/** Clients for cluster #0; logs go to stderr only when FLOTILLA_TEST_LOG names a level. */
export function runtimeEnv(): RuntimeEnv {
  const k = kube(cluster(0));
  const rest = createKubeRest(k.kc);
  const logger = pino({ level: process.env.FLOTILLA_TEST_LOG ?? 'silent' }, pino.destination(2));
  return { k, kc: k.kc, rest, logger, listWatcher: (ref, options = {}) => kubeListWatcher(k.kc, rest, ref, options) };
}

/**
 * Wraps a real ListWatcher so a test can cut the open watch with an error (as a dropped
 * connection would) and make the next watch answer 410 Gone.
 *
 * Why 410 is injected rather than provoked: the apiserver answers a watch from its watch cache,
 * which on a test cluster still holds every event since it started, so even resourceVersion "1"
 * is replayed instead of expiring; etcd compaction does not touch that cache. The injected ERROR
 * event is byte-for-byte the Status the apiserver sends when the cache has moved on.
 */
export class ControlledListWatcher implements ListWatcher {
  readonly description: string;
  readonly watchResourceVersions: string[] = [];
  lists = 0;
  #breakCurrent: ((err: Error) => void) | undefined;
  #expireNext = false;

  constructor(private readonly inner: ListWatcher) {
    this.description = `controlled ${inner.description}`;
  }

  list(options: ListOptions): Promise<ListPage> {
    this.lists++;
    return this.inner.list(options);
  }

  async watch(options: WatchOptions): Promise<WatchStream> {
    this.watchResourceVersions.push(options.resourceVersion);
    if (this.#expireNext) {
      this.#expireNext = false;
      options.onEvent({ type: 'ERROR', object: expiredStatus(options.resourceVersion) });
      return { done: Promise.resolve(), abort: () => {} };
    }
    const stream = await this.inner.watch(options);
    let fail!: (err: Error) => void;
    const broken = new Promise<never>((_, reject) => (fail = reject));
    this.#breakCurrent = (err) => {
      fail(err);
      stream.abort();
    };
    return { done: Promise.race([stream.done, broken]), abort: () => stream.abort() };
  }

  /** Ends the current watch with `err`, as a reset connection would. */
  breakWatch(err = new Error('connection reset by test')): void {
    this.#breakCurrent?.(err);
  }

  /** The next watch gets 410 Gone, as when its resourceVersion fell out of the watch cache. */
  expireNextWatch(): void {
    this.#expireNext = true;
  }
}

function expiredStatus(resourceVersion: string): object {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `too old resource version: ${resourceVersion} (${Number(resourceVersion) + 1000})`,
    reason: 'Expired',
    code: 410,
  };
}

/** The value of one sample of a metric in `registry`, 0 when absent. */
export async function metricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  const sample = values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return sample?.value ?? 0;
}
