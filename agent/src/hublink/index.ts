export { createHubLink, type HubLink } from './hublink.js';
export { createKubeApplier, FIELD_MANAGER } from './kube-applier.js';
export { createHubLinkMetrics, type HubLinkMetrics } from './metrics.js';
export { decideDesired, stampManifest, type DesiredDecision } from './desired-decision.js';
export { statusReport, countsOf } from './object-status.js';
export { hubLinkRunnable, type HubLinkRunnableDeps } from './runnable.js';
export { secretCredentialStore } from './secret-store.js';
export { hubFetch, type HubFetch } from './hub-fetch.js';
export { createLinkTlsHealth, isCertificateError, natsConnector, type LinkTlsHealth } from './tls.js';
export { probeNatsTls } from './nats-tls-probe.js';
export {
  DEFAULT_HUBLINK_OPTIONS,
  type HubLinkCredentials,
  type HubLinkDeps,
  type HubLinkOptions,
  type KubeApplier,
  type KubeObject,
  type NatsConnector,
  type ObjectRef,
} from './types.js';
export {
  joinFleet,
  memoryCredentialStore,
  type CredentialStore,
  type JoinOptions,
  type JoinState,
} from './registration.js';
