/**
 * The agent's admission webhook: the HTTPS server, its certificates and its webhook
 * configurations, served by every replica (not only the leader). setupWebhook wires, in order:
 *
 * 1. the informers the handlers read (informers.ts) and the handlers over them (handlers.ts),
 *    with injection conflicts recorded as events (conflicts.ts);
 * 2. the server: the admission thread, or the main thread (admission-server.ts);
 * 3. the certificates (certs/): the server serves as soon as one exists and reloads it in place,
 *    and the CA bundle goes into the webhook configurations (publish.ts);
 * 4. the runnable that keeps the certificates in sync (cert-sync.ts), and a readiness check.
 */
import type { ComponentContext } from '../runtime/component.js';
import { createAdmissionServer, type AdmissionServer } from './admission-server.js';
import { certSyncRunnable } from './cert-sync.js';
import { CertManager } from './certs/manager.js';
import type { RotationPolicy } from './certs/rotation.js';
import { kubeSecretStore } from './certs/store.js';
import { servingHosts, type WebhookConfig } from './config.js';
import { conflictRecorder } from './conflicts.js';
import { wiredDefinitions } from './handlers.js';
import { webhookInformers } from './informers.js';
import { bundlePublisher } from './publish.js';
import type { AdmissionThread } from './thread/host.js';
import { kubeDeletionInventory } from './validating/deletion-inventory.js';
import { kubeCrrPodReader } from './mutating/crr-pod-reader.js';
import { pubGuard as createPubGuard } from '../controllers/podunavailablebudget/guard.js';
import { kubePubStore } from '../controllers/podunavailablebudget/guard-store.js';
import { spreadGuard as createSpreadGuard } from '../controllers/workloadspread/admission.js';
import { kubeSpreadStore } from '../controllers/workloadspread/spread-store.js';
import { systemClock } from '../runtime/clock.js';

export { WebhookServer } from './server.js';
export { AdmissionThread } from './thread/host.js';
export { defaultWebhookConfig, type WebhookConfig } from './config.js';
export type { AdmissionServer } from './admission-server.js';
export { revisionNamespace } from './informers.js';

/** What setupWebhook needs of its component's context. */
export type WebhookContext = Pick<
  ComponentContext<unknown>,
  'manager' | 'rest' | 'logger' | 'registry' | 'events' | 'run'
>;

/** What setupWebhook hands back (tests and readiness use it). */
export interface WebhookHandle {
  server: AdmissionServer;
  /** The admission thread, when admissions are served by one. */
  thread: AdmissionThread | undefined;
  certs: CertManager;
  /** True once serving with a certificate whose CA bundle is published. */
  isReady(): boolean;
}

export function setupWebhook(ctx: WebhookContext, config: WebhookConfig): WebhookHandle {
  const log = ctx.logger.child({ component: 'webhook' });
  const informers = webhookInformers(ctx.manager, config);
  const onConflicts = conflictRecorder(informers.sidecarSets, ctx.events('sidecarset-injection'));
  // In thread mode these handlers only describe the webhooks (configurations); the thread runs its own.
  const inventory = kubeDeletionInventory(ctx.rest);
  const crrPods = kubeCrrPodReader(ctx.rest);
  const podEvents = ctx.events('podunavailablebudget-webhook');
  const pubGuard = createPubGuard({
    store: kubePubStore(ctx.rest),
    clock: systemClock,
    inPlaceResize: config.inPlacePodVerticalScaling,
    onDenied: (pod, reason, message) => podEvents.event(pod, 'Warning', reason, message),
  });
  // WorkloadSpread assignments read the namespace's WorkloadSpreads from this cache, then write live.
  const spreadGuard = createSpreadGuard({
    store: kubeSpreadStore(ctx.rest, informers.workloadSpreads),
    now: () => systemClock.now(),
  });
  const definitions = wiredDefinitions(informers, {
    config,
    logger: log,
    onConflicts,
    inventory,
    crrPods,
    pubGuard,
    spreadGuard,
  });
  const { server, thread } = createAdmissionServer({
    config,
    logger: ctx.logger,
    registry: ctx.registry,
    stores: informers,
    definitions,
    onConflicts,
    inventory,
    crrPods,
    pubGuard,
    spreadGuard,
  });
  const certs = new CertManager({
    store: kubeSecretStore(ctx.rest, config.namespace, config.secretName),
    policy: rotationPolicy(config),
    hosts: servingHosts(config),
    onServingCert: async (tls) => {
      await server.setTls(tls);
      if (!server.isServing()) await server.listen();
    },
    publishBundle: bundlePublisher(ctx.rest, config, definitions),
    logger: ctx.logger,
  });
  const caches = [
    informers.sidecarSets,
    informers.namespaces,
    informers.revisions,
    informers.configMaps,
    informers.workloadSpreads,
    informers.podUnavailableBudgets,
  ];
  ctx.run(
    certSyncRunnable({ certs, server, thread, informers: caches, syncIntervalMs: config.syncIntervalMs, logger: log }),
  );
  const isReady = (): boolean => server.isServing() && certs.isReady() && caches.every((i) => i.hasSynced());
  ctx.manager.addReadinessCheck('webhook', isReady);
  return { server, thread, certs, isReady };
}

/**
 * Certificate lifetimes and rotation timing. An old CA leaves the bundle a propagation time plus
 * two sync intervals after the promotion, so every replica has reloaded meanwhile.
 */
function rotationPolicy(config: WebhookConfig): RotationPolicy {
  return {
    caValidityMs: config.caValidityMs,
    servingValidityMs: config.servingValidityMs,
    renewFraction: config.renewFraction,
    propagationMs: config.propagationMs,
    retireAfterMs: config.propagationMs + 2 * config.syncIntervalMs,
  };
}
