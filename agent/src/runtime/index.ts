/**
 * The agent's controller runtime: informers with indexed caches, a rate-limited work queue,
 * expectations, lease leader election, an event recorder, metrics, health endpoints, a generic
 * controller, the manager that runs them, and the component contract the agent's controllers,
 * webhook and hub link are set up by. Also published as `@flotilla/agent/runtime`.
 */
export { backoffDelay, type BackoffOptions } from './backoff.js';
export {
  BY_NAMESPACE,
  BY_NODE_NAME,
  BY_OWNER_UID,
  ObjectCache,
  type IndexFunc,
  type Lister,
  type ReadStore,
  type ReplaceDiff,
} from './cache.js';
export { systemClock, type Clock, type Timer } from './clock.js';
export {
  selectComponents,
  setupComponents,
  type Component,
  type ComponentBase,
  type ComponentContext,
  type ComponentRegistrar,
  type ComponentRunnable,
  type Placement,
} from './component.js';
export {
  Controller,
  type ControllerOptions,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
  type StopOptions,
} from './controller.js';
export { retryOnConflict } from './conflict.js';
export { isServed } from './discovery.js';
export {
  EventRecorder,
  involvedObjectOf,
  kubeEventSink,
  referencedObject,
  type CoreEvent,
  type EventRecorderOptions,
  type EventRecording,
  type EventSink,
  type EventType,
  type InvolvedObject,
} from './events.js';
export { isAtLeast, ResourceVersionExpectations, ScaleExpectations, type ExpectationsOptions } from './expectations.js';
export { enqueueObject, enqueueOwner, type KeyMapper, type OwnerMatch } from './handlers.js';
export { HealthServer, type HealthCheck, type HealthServerOptions } from './health.js';
export {
  Informer,
  isExpired,
  type DeleteInfo,
  type EventHandler,
  type InformerMetrics,
  type InformerOptions,
} from './informer.js';
export { kubeListWatcher, type KubeListWatchOptions } from './kube-list-watch.js';
export {
  controllerRef,
  deepFreeze,
  groupOf,
  namespacedKey,
  objectKey,
  sameJson,
  splitKey,
  toPlainJson,
  type KubeObject,
  type ObjectMeta,
  type OwnerReference,
} from './kube-object.js';
export { formatMicroTime, formatTime, parseTime } from './kube-time.js';
export {
  formatLabelSelector,
  labelSelectorMatcher,
  parseLabelSelector,
  toMatcher,
  type LabelMatcher,
  type LabelSelector,
  type LabelSelectorRequirement,
  type Labels,
  type SelectorInput,
} from './label-selector.js';
export {
  decideLeadership,
  kubeLeaseClient,
  LeaderElector,
  nextLease,
  releasedLease,
  type DecisionInput,
  type ElectionOutcome,
  type LeaderDecision,
  type LeaderElectionOptions,
  type LeaderMetrics,
  type Lease,
  type LeaseClient,
  type LeaseSpec,
} from './leader-election.js';
export type { ListOptions, ListPage, ListWatcher, WatchEvent, WatchOptions, WatchStream } from './list-watch.js';
export {
  Manager,
  type InformerRequest,
  type ManagerLeaderElection,
  type ManagerOptions,
  type Runnable,
} from './manager.js';
export { RuntimeMetrics, type ReconcileMetrics, type ReconcileOutcome } from './metrics.js';
export {
  defaultControllerRateLimiter,
  ItemExponentialRateLimiter,
  MaxOfRateLimiter,
  TokenBucketRateLimiter,
  type RateLimiter,
} from './rate-limiter.js';
export { apiVersionOf, resourcePath, Resources, type ResourceRef } from './resource.js';
export {
  createKubeRest,
  PatchType,
  type KubeRequest,
  type KubeRest,
  type KubeRestClient,
  type KubeRestOptions,
  type KubeStream,
} from './rest.js';
export { defaultTransform, stripManagedFields, stripNodeImages, type ObjectTransform } from './transform.js';
export { WatchDecoder } from './watch-decoder.js';
export { WorkQueue, type QueueMetrics, type WorkQueueOptions } from './workqueue.js';
