/**
 * The admission thread's side: copies of the caches fed by the main thread, the handlers wired
 * to them, and the HTTPS server. Nothing here talks to the apiserver; events and metrics go back
 * to the main thread as messages. `serveAdmissions` takes the port explicitly so tests can drive
 * it over a MessageChannel in one thread; worker.ts runs it on the worker's parentPort.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { MessagePort } from 'node:worker_threads';
import type { Logger } from 'pino';
import { ObjectCache } from '../../runtime/cache.js';
import { EVENT_LOOP_MONITOR_MS } from '../../runtime/event-loop.js';
import { deepFreeze, type KubeObject } from '../../runtime/kube-object.js';
import { wiredDefinitions, type WebhookStores } from '../handlers.js';
import type { DeletionInventory } from '../validating/deletion-protection-handler.js';
import type { CrrPodLookup, CrrPodReader } from '../mutating/crr-defaults.js';
import type { PubGuard, PubVerdict } from '../../controllers/podunavailablebudget/guard.js';
import type { WorkloadRef } from '../../controllers/podunavailablebudget/client.js';
import type { SpreadAssignment, SpreadGuard } from '../../controllers/workloadspread/admission.js';
import type { WebhookServerMetrics } from '../metrics.js';
import { WebhookServer } from '../server.js';
import { STORE_NAMES, type FromThread, type StoreName, type ThreadInit, type ToThread } from './protocol.js';

/** Metrics batched into one message per flush: a message per review would cost the main thread more. */
class BatchedMetrics implements WebhookServerMetrics {
  #observations: [string, boolean, number][] = [];
  #connections = 0;
  #abandoned = 0;
  #timer: NodeJS.Timeout | undefined;

  /** Sends what was recorded `flushMs` after the first record: an idle thread never wakes for it. */
  constructor(
    private readonly post: (msg: FromThread) => void,
    private readonly flushMs: number,
  ) {}

  observe(path: string, allowed: boolean, seconds: number): void {
    this.#observations.push([path, allowed, seconds]);
    this.#schedule();
  }

  connection(): void {
    this.#connections++;
    this.#schedule();
  }

  abandoned(): void {
    this.#abandoned++;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => this.flush(), this.flushMs);
    this.#timer.unref();
  }

  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#observations.length === 0 && this.#connections === 0 && this.#abandoned === 0) return;
    this.post({
      type: 'metrics',
      observations: this.#observations,
      connections: this.#connections,
      abandoned: this.#abandoned,
    });
    this.#observations = [];
    this.#connections = 0;
    this.#abandoned = 0;
  }
}

/** Resolves the waiter of `id` with `value`, or rejects it with `error` when there is none. */
function settle<T>(
  waiters: Map<number, { resolve(v: T): void; reject(e: Error): void }>,
  id: number,
  value: T | undefined,
  error: string,
): void {
  const waiter = waiters.get(id);
  waiters.delete(id);
  if (value !== undefined) waiter?.resolve(value);
  else waiter?.reject(new Error(error));
}

/** Serves admissions on `port`'s instructions until told to close; returns the server (tests). */
export function serveAdmissions(port: MessagePort, init: ThreadInit, logger: Logger): WebhookServer {
  const post = (msg: FromThread): void => port.postMessage(msg);
  const caches = Object.fromEntries(STORE_NAMES.map((name) => [name, new ObjectCache<KubeObject>()])) as Record<
    StoreName,
    ObjectCache<KubeObject>
  >;
  const metrics = new BatchedMetrics(post, init.flushMs);
  const loop = monitorEventLoopDelay({ resolution: EVENT_LOOP_MONITOR_MS });
  loop.enable();

  const server = new WebhookServer({ host: init.config.host, port: init.config.port, logger, metrics });
  const counting = new Map<number, { resolve(n: number): void; reject(e: Error): void }>();
  let nextCount = 1;
  // The main thread reads the apiserver for deletion protection; a review waits for its answer.
  const inventory: DeletionInventory = {
    count: (query) =>
      new Promise<number>((resolve, reject) => {
        const id = nextCount++;
        counting.set(id, { resolve, reject });
        post({ type: 'count', id, query });
      }),
  };
  const deciding = new Map<number, { resolve(v: PubVerdict): void; reject(e: Error): void }>();
  // PodUnavailableBudget admissions read and write the budget from the main thread, too.
  const resolving = new Map<number, { resolve(v: WorkloadRef | undefined): void; reject(e: Error): void }>();
  const pubGuard: PubGuard = {
    admit: (query) =>
      new Promise<PubVerdict>((resolve, reject) => {
        const id = nextCount++;
        deciding.set(id, { resolve, reject });
        post({ type: 'pub', id, query });
      }),
    replicaSetWorkload: (namespace, replicaSet) =>
      new Promise<WorkloadRef | undefined>((resolve, reject) => {
        const id = nextCount++;
        resolving.set(id, { resolve, reject });
        post({ type: 'pubWorkload', id, namespace, replicaSet });
      }),
  };
  const assigning = new Map<number, { resolve(v: SpreadAssignment | undefined): void; reject(e: Error): void }>();
  // WorkloadSpread assignments write the WorkloadSpread's status from the main thread.
  const spreadGuard: SpreadGuard = {
    assign: (query) =>
      new Promise<SpreadAssignment | undefined>((resolve, reject) => {
        const id = nextCount++;
        assigning.set(id, { resolve, reject });
        post({ type: 'spread', id, query });
      }),
  };
  const reading = new Map<number, { resolve(v: CrrPodLookup): void; reject(e: Error): void }>();
  // The CRR defaulting webhook reads the pod and node through the main thread.
  const crrPods: CrrPodReader = {
    read: (namespace, pod) =>
      new Promise<CrrPodLookup>((resolve, reject) => {
        const id = nextCount++;
        reading.set(id, { resolve, reject });
        post({ type: 'crrPod', id, namespace, pod });
      }),
  };
  const defs = wiredDefinitions(caches as unknown as WebhookStores, {
    config: init.config,
    logger,
    inventory,
    crrPods,
    pubGuard,
    spreadGuard,
    onConflicts: (conflicts, namespace) => post({ type: 'conflicts', conflicts: [...conflicts], namespace }),
  });
  for (const def of defs) server.handle(def.path, def.handler);

  type Answer = Omit<Extract<FromThread, { type: 'reply' }>, 'type' | 'id'>;
  const reply = async (id: number, work: () => Answer | Promise<Answer>): Promise<void> => {
    try {
      post({ type: 'reply', id, ...(await work()) });
    } catch (err) {
      post({ type: 'reply', id, error: err instanceof Error ? err.message : String(err) });
    }
  };
  port.on('message', (msg: ToThread) => {
    if (msg.type === 'crrPodRead')
      settle(reading, msg.id, msg.lookup, `reading the CRR's pod: ${msg.error ?? 'no answer'}`);
  });
  // Assignments are answered on their own listener, apart from the cache and server messages.
  port.on('message', (msg: ToThread) => {
    if (msg.type !== 'spreadAssigned') return;
    const waiter = assigning.get(msg.id);
    assigning.delete(msg.id);
    if (msg.error !== undefined) waiter?.reject(new Error(`WorkloadSpread assignment: ${msg.error}`));
    else waiter?.resolve(msg.assignment);
  });
  // A new pod's ReplicaSet, read for binding it to its budget.
  port.on('message', (msg: ToThread) => {
    if (msg.type !== 'pubWorkloadFound') return;
    const waiter = resolving.get(msg.id);
    resolving.delete(msg.id);
    if (msg.error !== undefined) waiter?.reject(new Error(`reading the pod's ReplicaSet: ${msg.error}`));
    else waiter?.resolve(msg.workload);
  });
  port.on('message', (msg: ToThread) => {
    switch (msg.type) {
      case 'upsert':
        // Frozen as the informer's objects are: a handler mutating a cached object throws at its source.
        caches[msg.store].upsert(deepFreeze(msg.object as KubeObject));
        return;
      case 'remove':
        caches[msg.store].remove(msg.key);
        return;
      case 'reset':
        caches[msg.store].replace([]);
        return;
      case 'counted': {
        const waiter = counting.get(msg.id);
        counting.delete(msg.id);
        if (msg.error !== undefined) waiter?.reject(new Error(`counting for deletion protection: ${msg.error}`));
        else waiter?.resolve(msg.count ?? 0);
        return;
      }
      case 'pubDecided':
        settle(deciding, msg.id, msg.verdict, `PodUnavailableBudget check: ${msg.error ?? 'no answer'}`);
        return;
      case 'tls':
        void reply(msg.id, () => {
          server.setTls(msg.tls);
          return server.isServing() ? { port: server.port() } : {};
        });
        return;
      case 'listen':
        void reply(msg.id, async () => ({ port: server.isServing() ? server.port() : await server.listen() }));
        return;
      case 'stats':
        void reply(msg.id, () => {
          const stats = {
            p50: loop.percentile(50) / 1e9,
            p99: loop.percentile(99) / 1e9,
            max: loop.max / 1e9,
            resolution: EVENT_LOOP_MONITOR_MS / 1000,
          };
          loop.reset();
          return { stats };
        });
        return;
      case 'close':
        void reply(msg.id, async () => {
          await server.close();
          metrics.flush();
          if (msg.final) {
            // Nothing keeps the thread alive after this (the host terminates it anyway).
            loop.disable();
            port.unref();
          }
          return {};
        });
        return;
    }
  });
  return server;
}
