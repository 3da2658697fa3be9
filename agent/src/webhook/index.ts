/**
 * The agent's admission webhook: the HTTPS server, its certificates and its webhook
 * configurations, served by every replica (not only the leader). setupWebhook registers the
 * informers it reads and a runnable that, on every replica:
 *
 * 1. waits for its caches, so no pod is admitted without the SidecarSets it should get;
 * 2. syncs the certificates (creating the CA and serving certificate on first start), starts
 *    serving as soon as a certificate exists, and publishes the CA bundle into the configurations;
 * 3. syncs again every interval (sooner while a rotation waits), reloading certificates in place.
 */
import { Gauge, type Registry as PromRegistry } from 'prom-client';
import { type SidecarSet, KRUISE_API_VERSION, KRUISE_SYSTEM_NAMESPACE } from '@flotilla/api';
import type { ComponentContext } from '../runtime/component.js';
import type { Informer } from '../runtime/informer.js';
import { PatchType } from '../runtime/rest.js';
import { Resources, type ResourceRef } from '../runtime/resource.js';
import type { InjectionConflict } from '../controllers/sidecarset/inject.js';
import { LABEL_SIDECARSET_NAME } from '@flotilla/api';
import type { ControllerRevision, Namespace } from '../kube/types.js';
import { injectCaBundle } from './ca-bundle.js';
import { CertManager } from './certs/manager.js';
import { kubeSecretStore } from './certs/store.js';
import { servingHosts, type WebhookConfig } from './config.js';
import { buildWebhookConfigurations, type WebhookConfiguration } from './configurations.js';
import { WebhookError } from './errors.js';
import { wiredDefinitions, type WebhookStores } from './handlers.js';
import { promWebhookMetrics } from './metrics.js';
import { WebhookServer, type TlsMaterial } from './server.js';
import { AdmissionThread, type MirrorSource } from './thread/host.js';
import { STORE_NAMES } from './thread/protocol.js';

export { WebhookServer } from './server.js';
export { AdmissionThread } from './thread/host.js';
export { defaultWebhookConfig, webhookConfigFromFlags, type WebhookConfig } from './config.js';

/** What setupWebhook needs of its component's context. */
export type WebhookContext = Pick<
  ComponentContext<unknown>,
  'manager' | 'rest' | 'logger' | 'registry' | 'events' | 'run'
>;

const FIELD_MANAGER = 'flotilla-agent/webhook';

/**
 * What serves the admissions: the admission thread (default) or, with `--webhook-thread=false`,
 * a WebhookServer in the main thread. Both take a certificate, listen, close and count reviews.
 */
export interface AdmissionServer {
  setTls(tls: TlsMaterial): void | Promise<void>;
  listen(): Promise<number>;
  close(): Promise<void>;
  isServing(): boolean;
  served(): number;
  port(): number | undefined;
}

/** What setupWebhook hands back (tests and readiness use it). */
export interface WebhookHandle {
  server: AdmissionServer;
  /** The admission thread, when admissions are served by one. */
  thread: AdmissionThread | undefined;
  certs: CertManager;
  /** True once serving with a certificate whose CA bundle is published. */
  isReady(): boolean;
}

/** The namespace SidecarSet revisions live in (OpenKruise: the manager's, kruise-system by default). */
export function revisionNamespace(config: WebhookConfig): string {
  return config.namespace || KRUISE_SYSTEM_NAMESPACE;
}

export function setupWebhook(ctx: WebhookContext, config: WebhookConfig): WebhookHandle {
  const { manager, rest } = ctx;
  const log = ctx.logger.child({ component: 'webhook' });
  const sidecarSets = manager.informer<SidecarSet>({ resource: Resources.sidecarSets });
  const namespaces = manager.informer<Namespace>({ resource: Resources.namespaces });
  const revisions = manager.informer<ControllerRevision>({
    resource: Resources.controllerRevisions,
    namespace: revisionNamespace(config),
    labelSelector: LABEL_SIDECARSET_NAME,
  });
  const configMaps = manager.informer<{ metadata?: { name?: string }; data?: Record<string, string> }>({
    resource: Resources.configMaps,
    namespace: config.namespace,
    fieldSelector: `metadata.name=${config.whitelistConfigMap}`,
  });
  const events = ctx.events('sidecarset-injection');
  const recordConflicts = (conflicts: readonly InjectionConflict[], namespace: string): void => {
    for (const c of conflicts) {
      const ss = sidecarSets.get(undefined, c.skippedFrom);
      if (ss) {
        const msg = `container ${c.container} of SidecarSet ${c.skippedFrom} was not injected into a pod in namespace ${namespace}: SidecarSet ${c.keptFrom} injects a container of that name (the first SidecarSet by name wins)`;
        events.event(
          { ...ss, apiVersion: KRUISE_API_VERSION, kind: 'SidecarSet' },
          'Warning',
          'SidecarContainerConflict',
          msg,
        );
      }
    }
  };
  const stores: WebhookStores = { sidecarSets, namespaces, revisions, configMaps };
  // In thread mode these handlers only describe the webhooks (configurations); the thread runs its own.
  const defs = wiredDefinitions(stores, { config, logger: log, onConflicts: recordConflicts });
  const metrics = promWebhookMetrics(ctx.registry);
  let server: AdmissionServer;
  let thread: AdmissionThread | undefined;
  if (config.thread) {
    thread = new AdmissionThread({ config, logger: ctx.logger, metrics, onConflicts: recordConflicts });
    for (const name of STORE_NAMES) thread.mirror(name, stores[name] as unknown as MirrorSource);
    registerThreadLoopMetric(ctx.registry, thread);
    server = thread;
  } else {
    const inProcess = new WebhookServer({ host: config.host, port: config.port, logger: ctx.logger, metrics });
    for (const def of defs) inProcess.handle(def.path, def.handler);
    server = inProcess;
  }

  const apply = async (obj: WebhookConfiguration, ref: ResourceRef): Promise<void> => {
    try {
      await rest.request({
        method: 'PATCH',
        path: `/apis/${ref.group}/${ref.version}/${ref.plural}/${encodeURIComponent(obj.metadata!.name!)}`,
        query: { fieldManager: FIELD_MANAGER, force: true },
        body: obj,
        contentType: PatchType.apply,
      });
    } catch (err) {
      throw new WebhookError('WEBHOOK_ERR_CONFIGURATION', `cannot apply ${ref.kind} ${obj.metadata?.name}`, {
        cause: err,
      });
    }
  };
  const certs = new CertManager({
    store: kubeSecretStore(rest, config.namespace, config.secretName),
    policy: {
      caValidityMs: config.caValidityMs,
      servingValidityMs: config.servingValidityMs,
      renewFraction: config.renewFraction,
      propagationMs: config.propagationMs,
      retireAfterMs: config.propagationMs + 2 * config.syncIntervalMs,
    },
    hosts: servingHosts(config),
    onServingCert: async (tls) => {
      await server.setTls(tls);
      if (!server.isServing()) await server.listen();
    },
    publishBundle: async (bundlePem) => {
      if (!config.manageConfigurations) {
        const names = (type: 'mutating' | 'validating'): string[] =>
          defs.filter((d) => d.type === type).map((d) => d.name);
        await injectCaBundle(
          rest,
          Resources.mutatingWebhookConfigurations,
          config.mutatingConfigurationName,
          names('mutating'),
          bundlePem,
        );
        await injectCaBundle(
          rest,
          Resources.validatingWebhookConfigurations,
          config.validatingConfigurationName,
          names('validating'),
          bundlePem,
        );
        return;
      }
      const { mutating, validating } = buildWebhookConfigurations(defs, {
        mutatingName: config.mutatingConfigurationName,
        validatingName: config.validatingConfigurationName,
        target: config.url
          ? { kind: 'url', baseUrl: config.url }
          : { kind: 'service', namespace: config.namespace, name: config.serviceName, port: config.servicePort },
        caBundlePem: bundlePem,
        timeoutSeconds: config.timeoutSeconds,
        agentNamespace: config.namespace,
        namespaceSelector: config.namespaceSelector,
        clusterScopedObjectSelector: config.clusterScopedObjectSelector,
        failurePolicy: config.failurePolicy,
      });
      await apply(mutating, Resources.mutatingWebhookConfigurations);
      await apply(validating, Resources.validatingWebhookConfigurations);
    },
    logger: ctx.logger,
  });

  const informers: Informer<never>[] = [sidecarSets, namespaces, revisions, configMaps] as unknown as Informer<never>[];
  ctx.run({
    name: 'webhook',
    start: async (signal) => {
      thread?.start();
      await Promise.all(informers.map((i) => i.waitForSync(signal))).catch(() => undefined);
      let failures = 0;
      while (!signal.aborted) {
        let delay = config.syncIntervalMs;
        try {
          const step = await certs.sync();
          failures = 0;
          if (step.action === 'wait') delay = Math.max(100, Math.min(delay, step.untilMs - Date.now()));
          else if (step.action !== 'none') delay = Math.min(delay, 1000);
        } catch (err) {
          failures++;
          delay = Math.min(config.syncIntervalMs, 500 * 2 ** Math.min(failures, 6));
          log.error({ err, retryInMs: delay }, 'webhook certificate sync failed');
        }
        // The abort listener goes once the pause ends: one per sync would pile up for the process's life.
        await new Promise<void>((resolve) => {
          const stop = (): void => {
            clearTimeout(t);
            resolve();
          };
          const t = setTimeout(() => {
            signal.removeEventListener('abort', stop);
            resolve();
          }, delay);
          signal.addEventListener('abort', stop, { once: true });
        });
      }
      await server.close();
      await thread?.stop();
    },
  });
  const isReady = (): boolean => server.isServing() && certs.isReady() && informers.every((i) => i.hasSynced());
  manager.addReadinessCheck('webhook', isReady);
  return { server, thread, certs, isReady };
}

/**
 * The admission thread's event-loop delay on /metrics, read from the thread at each scrape (and
 * reset then, as prom-client does for the main thread's nodejs_eventloop_lag_*). Every figure
 * includes the monitor's 10 ms sampling interval, as those do.
 */
function registerThreadLoopMetric(registry: PromRegistry, thread: AdmissionThread): void {
  new Gauge({
    name: 'flotilla_webhook_thread_eventloop_lag_seconds',
    help: "Event-loop delay of the admission thread since the last scrape (p50, p99, max; includes the monitor's 10 ms interval)",
    labelNames: ['stat'],
    registers: [registry],
    async collect() {
      const stats = await Promise.race([
        thread.loopStats().catch(() => undefined),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 1000).unref()),
      ]);
      this.reset();
      if (!stats) return;
      this.set({ stat: 'p50' }, stats.p50);
      this.set({ stat: 'p99' }, stats.p99);
      this.set({ stat: 'max' }, stats.max);
    },
  });
}
