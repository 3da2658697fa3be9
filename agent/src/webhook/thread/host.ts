/**
 * The main thread's handle on the admission thread: it starts the worker, mirrors the informer
 * caches the handlers read into it, forwards serving certificates, turns the thread's batched
 * metrics into the agent's own, records the events it asks for, and restarts it if it dies.
 *
 * Why a thread: the agent's controllers share the main thread's event loop, and one reconcile of
 * a SidecarSet matching thousands of pods blocks it for tens of milliseconds (test/bench/webhook,
 * `--components=*`). Admissions are on the critical path of every pod create, so they get an
 * event loop of their own; the main thread only keeps their inputs up to date (a cache is at most
 * as stale as the main thread is busy, as informer caches always are).
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { objectKey, type KubeObject } from '../../runtime/kube-object.js';
import type { InjectionConflict } from '../../controllers/sidecarset/inject.js';
import type { WebhookConfig } from '../config.js';
import { AgentError } from '../../errors.js';
import type { WebhookServerMetrics } from '../metrics.js';
import type { TlsMaterial } from '../server.js';
import type { DeletionInventory } from '../validating/deletion-protection-handler.js';
import type { CrrPodReader } from '../mutating/crr-defaults.js';
import type { InventoryQuery } from '../validating/deletion-protection.js';
import type { PubGuard, PubQuery } from '../../controllers/podunavailablebudget/guard.js';
import type { WorkloadRef } from '../../controllers/podunavailablebudget/client.js';
import type { SpreadGuard, SpreadQuery } from '../../controllers/workloadspread/admission.js';
import type { FromThread, LoopStats, StoreName, ThreadInit, ToThread } from './protocol.js';
import { lowerCallingThread, osThreadPriority, type ThreadPriority } from './priority.js';

/** What the host mirrors from: an informer (its cache, and its change notifications). */
export interface MirrorSource {
  list(): KubeObject[];
  addEventHandler(handler: {
    onAdd?(obj: KubeObject): void;
    onUpdate?(oldObj: KubeObject, newObj: KubeObject): void;
    onDelete?(obj: KubeObject): void;
  }): () => void;
}

export interface AdmissionThreadOptions {
  config: WebhookConfig;
  logger: Logger;
  metrics?: WebhookServerMetrics;
  onConflicts?(conflicts: readonly InjectionConflict[], namespace: string): void;
  /** Answers the thread's deletion-protection counts. */
  inventory?: DeletionInventory;
  /** Reads CRR pods for the thread's CRR defaulting webhook. */
  crrPods?: CrrPodReader;
  /** Answers the thread's PodUnavailableBudget admissions. */
  pubGuard?: PubGuard;
  /** Answers the thread's WorkloadSpread assignments. */
  spreadGuard?: SpreadGuard;
  /** Metrics flush interval of the thread (ms); default 100. */
  flushMs?: number;
  /** Wait before restarting a thread that died (ms); default 1000. */
  restartDelayMs?: number;
  /** Sets thread priorities for `config.controllersNice` (the operating system's by default). */
  priority?: ThreadPriority;
  /** Longest wait for the thread to answer a request (ms); default 30 s. */
  requestTimeoutMs?: number;
}

type Reply = Extract<FromThread, { type: 'reply' }>;

/**
 * Starts the thread's module: the compiled worker.js next to this file, or, when the agent runs
 * from its TypeScript sources (tsx, vitest), worker.ts through tsx's loader with the workspace
 * packages resolved to their sources as well.
 */
function spawn(init: ThreadInit): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL('./worker.js', here), { workerData: init });
  const source = (execArgv: string[]): Worker =>
    new Worker(new URL('./source-bootstrap.mjs', here), {
      workerData: init,
      execArgv: [...execArgv.filter((a) => !a.startsWith('--conditions')), '--conditions=@flotilla/source'],
    });
  try {
    return source(process.execArgv);
  } catch (err) {
    // Process-wide V8 flags (--heap-growing-percent, as the agent image sets) are refused in a
    // thread's execArgv; the thread runs without them, as the compiled agent's thread does.
    if ((err as { code?: string }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw err;
    return source([]);
  }
}

export class AdmissionThread {
  readonly #o: AdmissionThreadOptions;
  readonly #log: Logger;
  readonly #sources = new Map<StoreName, MirrorSource>();
  readonly #pending = new Map<number, { resolve(r: Reply): void; reject(e: Error): void }>();
  #worker: Worker | undefined;
  #nextId = 1;
  #tls: TlsMaterial | undefined;
  /** Whether the server should listen (a restarted thread listens again when it should). */
  #wantListening = false;
  #listening = false;
  #port: number | undefined;
  #served = 0;
  #stopped = false;
  #restarts = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  /** The main thread runs at config.controllersNice: threads started from now on inherit it. */
  #mainThreadLowered = false;

  constructor(options: AdmissionThreadOptions) {
    this.#o = options;
    this.#log = options.logger.child({ component: 'webhook-thread-host' });
  }

  /**
   * Mirrors `source` into the thread's store `store`: every change is forwarded as it happens,
   * and a (re)started thread first gets the whole cache. Register before start().
   */
  mirror(store: StoreName, source: MirrorSource): void {
    this.#sources.set(store, source);
    source.addEventHandler({
      onAdd: (obj) => this.#post({ type: 'upsert', store, object: obj }),
      onUpdate: (oldObj, newObj) => {
        if (oldObj !== newObj) this.#post({ type: 'upsert', store, object: newObj });
      },
      onDelete: (obj) => this.#post({ type: 'remove', store, key: objectKey(obj) }),
    });
  }

  /** Starts the thread with a full copy of every mirrored cache. */
  start(): void {
    if (this.#worker || this.#stopped) return;
    const init: ThreadInit = {
      config: {
        host: this.#o.config.host,
        port: this.#o.config.port,
        namespace: this.#o.config.namespace,
        whitelistConfigMap: this.#o.config.whitelistConfigMap,
        patchMetadataDefaultsAllowed: this.#o.config.patchMetadataDefaultsAllowed,
        sortSidecarContainersByName: this.#o.config.sortSidecarContainersByName,
        resourcesDeletionProtection: this.#o.config.resourcesDeletionProtection,
        crdCascadingDeletionProtection: this.#o.config.crdCascadingDeletionProtection,
        pubDeleteGate: this.#o.config.pubDeleteGate,
        pubUpdateGate: this.#o.config.pubUpdateGate,
        workloadSpreadGate: this.#o.config.workloadSpreadGate,
        inPlacePodVerticalScaling: this.#o.config.inPlacePodVerticalScaling,
      },
      logLevel: this.#o.logger.level,
      flushMs: this.#o.flushMs ?? 100,
    };
    if (this.#mainThreadLowered) {
      this.#log.warn(
        { nice: this.#o.config.controllersNice },
        "the restarted admission thread inherits the controllers' lower CPU priority (raising it back needs CAP_SYS_NICE)",
      );
    }
    const worker = spawn(init);
    this.#worker = worker;
    // After the thread exists, which keeps the priority it was started with.
    if (!this.#mainThreadLowered && this.#o.config.controllersNice > 0) {
      this.#mainThreadLowered = lowerCallingThread(
        this.#o.config.controllersNice,
        this.#o.priority ?? osThreadPriority,
        this.#log,
      );
    }
    worker.on('message', (msg: FromThread) => this.#receive(msg));
    // CRR pod and ReplicaSet reads are answered on their own listener, apart from the other messages.
    worker.on('message', (msg: FromThread) => {
      if (msg.type === 'crrPod') void this.#crrPod(msg.id, msg.namespace, msg.pod);
      else if (msg.type === 'pubWorkload') void this.#pubWorkload(msg.id, msg.namespace, msg.replicaSet);
    });
    worker.on('error', (err) => this.#log.error({ err }, 'admission thread failed'));
    worker.on('exit', (code) => this.#exited(worker, code));
    // The copy and the live changes after it are posted from this thread in order, so the thread's
    // caches never miss a change in between.
    for (const [store, source] of this.#sources) {
      this.#post({ type: 'reset', store });
      for (const object of source.list()) this.#post({ type: 'upsert', store, object });
    }
    if (this.#tls) void this.#request({ type: 'tls', id: 0, tls: this.#tls }).catch(() => undefined);
    if (this.#wantListening) this.#relisten();
  }

  /** Loads or replaces the serving certificate in the thread; resolves once it is in use. */
  async setTls(tls: TlsMaterial): Promise<void> {
    this.#tls = tls;
    await this.#request({ type: 'tls', id: 0, tls });
  }

  /** Starts listening (a certificate must be set); resolves the bound port. */
  async listen(): Promise<number> {
    this.#wantListening = true;
    const reply = await this.#request({ type: 'listen', id: 0 });
    this.#listening = true;
    this.#port = reply.port;
    return reply.port!;
  }

  /** Stops listening; the thread stays up (listen() serves again). */
  async close(): Promise<void> {
    this.#wantListening = false;
    if (!this.#worker) return;
    await this.#request({ type: 'close', id: 0 });
    this.#listening = false;
  }

  /** Stops listening and ends the thread (agent shutdown). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wantListening = false;
    clearTimeout(this.#restartTimer);
    const worker = this.#worker;
    if (!worker) return;
    await this.#request({ type: 'close', id: 0, final: true }).catch(() => undefined);
    this.#listening = false;
    this.#worker = undefined;
    await worker.terminate();
  }

  isServing(): boolean {
    return this.#listening;
  }

  port(): number | undefined {
    return this.#listening ? this.#port : undefined;
  }

  /** Admission reviews answered so far (as reported by the thread's metric batches). */
  served(): number {
    return this.#served;
  }

  /** Times the thread was restarted after dying. */
  restarts(): number {
    return this.#restarts;
  }

  /** The thread's event-loop delay since the last call (and resets it); undefined without a thread. */
  async loopStats(): Promise<LoopStats | undefined> {
    if (!this.#worker) return undefined;
    return (await this.#request({ type: 'stats', id: 0 })).stats;
  }

  /** The worker, for tests that kill it. */
  worker(): Worker | undefined {
    return this.#worker;
  }

  #post(msg: ToThread): void {
    this.#worker?.postMessage(msg);
  }

  #request(msg: ToThread & { id: number }): Promise<Reply> {
    const worker = this.#worker;
    if (!worker) return Promise.reject(new AgentError('WEBHOOK_ERR_THREAD', 'the admission thread is not running'));
    const id = this.#nextId++;
    return new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new AgentError('WEBHOOK_ERR_THREAD', `the admission thread did not answer a ${msg.type} request`));
      }, this.#o.requestTimeoutMs ?? 30_000);
      this.#pending.set(id, {
        resolve: (r) => {
          clearTimeout(timer);
          if (r.error) reject(new AgentError('WEBHOOK_ERR_THREAD', `admission thread: ${msg.type}: ${r.error}`));
          else resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      worker.postMessage({ ...msg, id });
    });
  }

  #receive(msg: FromThread): void {
    switch (msg.type) {
      case 'reply': {
        const waiter = this.#pending.get(msg.id);
        this.#pending.delete(msg.id);
        waiter?.resolve(msg);
        return;
      }
      case 'metrics':
        for (const [path, allowed, seconds] of msg.observations) this.#o.metrics?.observe(path, allowed, seconds);
        for (let i = 0; i < msg.connections; i++) this.#o.metrics?.connection();
        for (let i = 0; i < msg.abandoned; i++) this.#o.metrics?.abandoned();
        this.#served += msg.observations.length;
        return;
      case 'conflicts':
        this.#o.onConflicts?.(msg.conflicts, msg.namespace);
        return;
      case 'count':
        void this.#count(msg.id, msg.query);
        return;
      case 'pub':
        void this.#pub(msg.id, msg.query);
        return;
      case 'spread':
        void this.#spread(msg.id, msg.query);
        return;
    }
  }

  async #spread(id: number, query: SpreadQuery): Promise<void> {
    const worker = this.#worker;
    try {
      if (!this.#o.spreadGuard) throw new Error('no WorkloadSpread guard');
      const assignment = await this.#o.spreadGuard.assign(query);
      worker?.postMessage({ type: 'spreadAssigned', id, assignment } satisfies ToThread);
    } catch (err) {
      this.#log.warn({ err, namespace: query.namespace }, 'WorkloadSpread assignment failed');
      const error = err instanceof Error ? err.message : String(err);
      worker?.postMessage({ type: 'spreadAssigned', id, error } satisfies ToThread);
    }
  }

  async #pub(id: number, query: PubQuery): Promise<void> {
    const worker = this.#worker;
    try {
      if (!this.#o.pubGuard) throw new Error('no PodUnavailableBudget guard');
      worker?.postMessage({ type: 'pubDecided', id, verdict: await this.#o.pubGuard.admit(query) } satisfies ToThread);
    } catch (err) {
      this.#log.warn({ err, pod: `${query.namespace}/${query.podName}` }, 'PodUnavailableBudget check failed');
      const error = err instanceof Error ? err.message : String(err);
      worker?.postMessage({ type: 'pubDecided', id, error } satisfies ToThread);
    }
  }

  async #pubWorkload(id: number, namespace: string, replicaSet: WorkloadRef): Promise<void> {
    const worker = this.#worker;
    try {
      if (!this.#o.pubGuard) throw new Error('no PodUnavailableBudget guard');
      const workload = await this.#o.pubGuard.replicaSetWorkload(namespace, replicaSet);
      worker?.postMessage({ type: 'pubWorkloadFound', id, workload } satisfies ToThread);
    } catch (err) {
      this.#log.warn({ err, replicaSet: `${namespace}/${replicaSet.name}` }, "reading a new pod's ReplicaSet failed");
      const error = err instanceof Error ? err.message : String(err);
      worker?.postMessage({ type: 'pubWorkloadFound', id, error } satisfies ToThread);
    }
  }

  async #crrPod(id: number, namespace: string, pod: string): Promise<void> {
    const worker = this.#worker;
    try {
      if (!this.#o.crrPods) throw new Error('no CRR pod reader');
      worker?.postMessage({
        type: 'crrPodRead',
        id,
        lookup: await this.#o.crrPods.read(namespace, pod),
      } satisfies ToThread);
    } catch (err) {
      this.#log.warn({ err, pod: `${namespace}/${pod}` }, 'reading the pod of a ContainerRecreateRequest failed');
      const error = err instanceof Error ? err.message : String(err);
      worker?.postMessage({ type: 'crrPodRead', id, error } satisfies ToThread);
    }
  }

  async #count(id: number, query: InventoryQuery): Promise<void> {
    const worker = this.#worker;
    try {
      if (!this.#o.inventory) throw new Error('no inventory to count with');
      worker?.postMessage({ type: 'counted', id, count: await this.#o.inventory.count(query) } satisfies ToThread);
    } catch (err) {
      this.#log.warn({ err, query }, 'deletion protection: counting failed');
      const error = err instanceof Error ? err.message : String(err);
      worker?.postMessage({ type: 'counted', id, error } satisfies ToThread);
    }
  }

  /** A thread that exits unasked is restarted (with its caches, certificate and listening state). */
  #exited(worker: Worker, code: number): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    this.#listening = false;
    for (const waiter of this.#pending.values()) {
      waiter.reject(new AgentError('WEBHOOK_ERR_THREAD', `the admission thread exited (code ${code})`));
    }
    this.#pending.clear();
    if (this.#stopped) return;
    this.#log.error({ code }, 'admission thread exited; restarting it');
    this.#restartTimer = setTimeout(() => {
      this.#restarts++;
      this.start();
    }, this.#o.restartDelayMs ?? 1000);
  }

  #relisten(): void {
    this.listen().catch((err: unknown) => {
      this.#log.error({ err }, 'the restarted admission thread cannot listen; retrying');
      if (!this.#stopped && this.#worker) this.#restartTimer = setTimeout(() => this.#relisten(), 1000);
    });
  }
}
