/**
 * What serves the admissions: the admission thread (default), which keeps pod creates off the
 * controllers' event loop, or with `--webhook-thread=false` a WebhookServer in the main thread.
 * Both take a certificate, listen, close and count the reviews they served.
 */
import { sleep } from '@flotilla/api';
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { WebhookConfig } from './config.js';
import type { ConflictRecorder } from './conflicts.js';
import type { WebhookStores } from './handlers.js';
import { promWebhookMetrics } from './metrics.js';
import type { WebhookDefinition } from './registry.js';
import { WebhookServer, type TlsMaterial } from './server.js';
import { AdmissionThread, type MirrorSource } from './thread/host.js';
import { STORE_NAMES } from './thread/protocol.js';
import type { DeletionInventory } from './validating/deletion-protection-handler.js';
import type { PubGuard } from '../controllers/podunavailablebudget/guard.js';
import type { CrrPodReader } from './mutating/crr-defaults.js';
import type { SpreadGuard } from '../controllers/workloadspread/admission.js';

export interface AdmissionServer {
  setTls(tls: TlsMaterial): void | Promise<void>;
  listen(): Promise<number>;
  close(): Promise<void>;
  isServing(): boolean;
  served(): number;
  port(): number | undefined;
}

export interface AdmissionServerDeps {
  config: WebhookConfig;
  logger: Logger;
  registry: Registry;
  stores: WebhookStores;
  /** The handlers over `stores`, served in the main thread; the thread wires its own. */
  definitions: readonly WebhookDefinition[];
  onConflicts: ConflictRecorder;
  /** Answers the admission thread's deletion-protection counts. */
  inventory: DeletionInventory;
  /** Answers the admission thread's CRR pod reads. */
  crrPods?: CrrPodReader;
  /** Answers the admission thread's PodUnavailableBudget checks. */
  pubGuard: PubGuard;
  /** Answers the admission thread's WorkloadSpread assignments. */
  spreadGuard: SpreadGuard;
}

/** The server, and the admission thread when it is the server. */
export function createAdmissionServer(deps: AdmissionServerDeps): {
  server: AdmissionServer;
  thread: AdmissionThread | undefined;
} {
  const { config, logger, registry } = deps;
  const metrics = promWebhookMetrics(registry);
  if (!config.thread) {
    const server = new WebhookServer({ host: config.host, port: config.port, logger, metrics });
    for (const def of deps.definitions) server.handle(def.path, def.handler);
    return { server, thread: undefined };
  }
  const thread = new AdmissionThread({
    config,
    logger,
    metrics,
    onConflicts: deps.onConflicts,
    inventory: deps.inventory,
    crrPods: deps.crrPods,
    pubGuard: deps.pubGuard,
    spreadGuard: deps.spreadGuard,
  });
  for (const name of STORE_NAMES) thread.mirror(name, deps.stores[name] as unknown as MirrorSource);
  registerThreadLoopMetric(registry, thread);
  return { server: thread, thread };
}

/**
 * The admission thread's event-loop delay on /metrics, read from the thread at each scrape (and
 * reset then, as prom-client does for the main thread's nodejs_eventloop_lag_*). Every figure
 * includes the monitor's 10 ms sampling interval, as those do.
 */
function registerThreadLoopMetric(registry: Registry, thread: AdmissionThread): void {
  new Gauge({
    name: 'flotilla_webhook_thread_eventloop_lag_seconds',
    help: "Event-loop delay of the admission thread since the last scrape (p50, p99, max; includes the monitor's 10 ms interval)",
    labelNames: ['stat'],
    registers: [registry],
    async collect() {
      const answered = new AbortController();
      const stats = await Promise.race([
        thread.loopStats().catch(() => undefined),
        sleep(1000, { signal: answered.signal }).then(() => undefined),
      ]);
      answered.abort();
      this.reset();
      if (!stats) return;
      this.set({ stat: 'p50' }, stats.p50);
      this.set({ stat: 'p99' }, stats.p99);
      this.set({ stat: 'max' }, stats.max);
    },
  });
}
