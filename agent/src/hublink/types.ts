/**
 * The hub link's injected dependencies. Everything with a side effect — NATS, the Kubernetes
 * API, logs, metrics — comes in through these interfaces, so the link can be wired by the agent
 * manager and driven by tests with real servers or fakes.
 */
import type { ConnectionOptions, NatsConnection } from '@nats-io/transport-node';
import type { WorkloadKind } from '@flotilla/api';
import type { Logger } from 'pino';
import type { FinishedRunStore } from './finished-job-store.js';
import type { HubLinkMetrics } from './metrics.js';

/**
 * The credentials the hub issued (AgentCredentials.nats) and the cluster's seed. A renewal
 * replaces `jwt` in place: every (re)connect reads it anew.
 */
export interface HubLinkCredentials {
  servers: string[];
  /** The user JWT the hub signed for the cluster's key. */
  jwt: string;
  /** The cluster's user nkey seed (signs each connect's nonce); never logged. */
  seed: string;
  inboxPrefix: string;
  /** The JetStream API prefix of the cluster's account (AGENT_JS_API_PREFIX). */
  apiPrefix: string;
  desiredStream: string;
  consumer: string;
}

/** How to open a NATS connection (the real one is `{ connect }` from @nats-io/transport-node). */
export interface NatsConnector {
  connect(options: ConnectionOptions): Promise<NatsConnection>;
}

/** A Kubernetes object as JSON. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    generation?: number;
    uid?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: unknown;
  status?: unknown;
}

export interface ObjectRef {
  kind: WorkloadKind;
  /** '' for cluster-scoped kinds. */
  namespace: string;
  name: string;
}

/** The cluster side: server-side apply, reads and deletes of the distributed kinds. */
export interface KubeApplier {
  /** Server-side apply under the agent's field manager (force: the hub owns these fields). */
  apply(ref: ObjectRef, manifest: KubeObject): Promise<KubeObject>;
  get(ref: ObjectRef): Promise<KubeObject | undefined>;
  /**
   * Deletes the object; an object that is already gone is not an error. `propagation` Foreground
   * keeps the object (with a deletionTimestamp) until the garbage collector removed its pods.
   */
  delete(ref: ObjectRef, propagation?: 'Foreground' | 'Background'): Promise<void>;
  /** Objects of a kind that carry the hub's managed-by label, in every namespace. */
  listManaged(kind: WorkloadKind): Promise<KubeObject[]>;
  /** e.g. v1.36.3 */
  serverVersion(): Promise<string>;
}

export interface HubLinkDeps {
  nats: NatsConnector;
  kube: KubeApplier;
  clusterName: string;
  credentials: HubLinkCredentials;
  logger: Logger;
  metrics: HubLinkMetrics;
  agentVersion: string;
  options?: Partial<HubLinkOptions>;
  /**
   * Where finished BroadcastJob runs are remembered across restarts (finished-jobs.ts); without
   * it, only for the life of the process.
   */
  finishedRuns?: FinishedRunStore;
  /** NATS refused the user JWT: expired, or refused otherwise (credential-renewal.ts renews it). */
  onAuthRefused?: (why: 'expired' | 'refused') => void;
  /** The connection was lost (false) or is back (true); the runnable probes why reconnects fail. */
  onConnectionChange?: (connected: boolean) => void;
}

export interface HubLinkOptions {
  /** How often managed objects are checked for status changes. */
  statusIntervalMs: number;
  /** Unchanged statuses are re-sent this often (the hub may have lost them). */
  statusResyncMs: number;
  heartbeatIntervalMs: number;
  /** Delay before a failed apply is redelivered. */
  retryDelayMs: number;
}

export const DEFAULT_HUBLINK_OPTIONS: HubLinkOptions = {
  statusIntervalMs: 1000,
  statusResyncMs: 30_000,
  heartbeatIntervalMs: 10_000,
  retryDelayMs: 2000,
};
