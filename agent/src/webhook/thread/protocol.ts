/**
 * Messages between the agent's main thread and the admission thread (thread/host.ts and
 * thread/worker.ts). The main thread owns everything that talks to the apiserver (informers,
 * certificates, events, /metrics); the admission thread owns the HTTPS server and answers reviews
 * from its own copies of the caches, so controller work in the main thread never delays an
 * admission. One MessagePort keeps messages in order: a cache change sent before a certificate is
 * applied before the server starts listening with it.
 */
import type { InjectionConflict } from '../../controllers/sidecarset/inject.js';
import type { SpreadAssignment, SpreadQuery } from '../../controllers/workloadspread/admission.js';
import type { WebhookConfig } from '../config.js';
import type { TlsMaterial } from '../server.js';
import type { HandlerWiring, WebhookStores } from '../handlers.js';
import type { InventoryQuery } from '../validating/deletion-protection.js';
import type { CrrPodLookup } from '../mutating/crr-defaults.js';
import type { PubQuery, PubVerdict } from '../../controllers/podunavailablebudget/guard.js';
import type { WorkloadRef } from '../../controllers/podunavailablebudget/client.js';

/** The caches mirrored into the admission thread. */
export type StoreName = keyof WebhookStores;
export const STORE_NAMES: readonly StoreName[] = [
  'sidecarSets',
  'namespaces',
  'revisions',
  'configMaps',
  'workloadSpreads',
  'podUnavailableBudgets',
];

/** What the admission thread starts with (its workerData). */
export interface ThreadInit {
  /** Where to listen, and what the handlers are configured with. */
  config: Pick<WebhookConfig, 'host' | 'port'> & HandlerWiring['config'];
  /** The agent's log level: the thread logs through its own pino root with the same redaction. */
  logLevel: string;
  /** How often batched metrics go to the main thread (ms). */
  flushMs: number;
}

/** Event-loop delay of the admission thread since the last request for it, in seconds. */
export interface LoopStats {
  p50: number;
  p99: number;
  max: number;
  /** The monitor's sampling interval, included in every figure (as in prom-client's nodejs_eventloop_lag_*). */
  resolution: number;
}

export type ToThread =
  | { type: 'upsert'; store: StoreName; object: unknown }
  | { type: 'remove'; store: StoreName; key: string }
  /** Empties a store before a full copy (a restarted thread, a relist). */
  | { type: 'reset'; store: StoreName }
  /** Loads or replaces the serving certificate (the reply carries the port when listening). */
  | { type: 'tls'; id: number; tls: TlsMaterial }
  /** Starts listening (needs a certificate); the reply carries the bound port. */
  | { type: 'listen'; id: number }
  | { type: 'stats'; id: number }
  /** Stops listening; `final` also ends the thread's timers and lets go of its port, so the thread can exit. */
  | { type: 'close'; id: number; final?: boolean }
  /** The answer to a `count` from the thread. */
  | { type: 'counted'; id: number; count?: number; error?: string }
  /** The answer to a `crrPod` from the thread. */
  | { type: 'crrPodRead'; id: number; lookup?: CrrPodLookup; error?: string }
  /** The answer to a `pub` from the thread. */
  | { type: 'pubDecided'; id: number; verdict?: PubVerdict; error?: string }
  /** The answer to a `pubWorkload`: the workload the ReplicaSet stands for (none: it does not exist). */
  | { type: 'pubWorkloadFound'; id: number; workload?: WorkloadRef; error?: string }
  /** The answer to a `spread`: the subset to inject (none: leave the pod as it is). */
  | { type: 'spreadAssigned'; id: number; assignment?: SpreadAssignment; error?: string };

export type FromThread =
  | { type: 'reply'; id: number; port?: number; error?: string; stats?: LoopStats }
  /** Batched observations: [path, allowed, seconds] per answered review, and counter increments. */
  | { type: 'metrics'; observations: [string, boolean, number][]; connections: number; abandoned: number }
  | { type: 'conflicts'; conflicts: InjectionConflict[]; namespace: string }
  /** Deletion protection asks the main thread, which reads the apiserver, to count (answer: `counted`). */
  | { type: 'count'; id: number; query: InventoryQuery }
  /** The CRR defaulting webhook asks the main thread for a pod and its node (answer: `crrPodRead`). */
  | { type: 'crrPod'; id: number; namespace: string; pod: string }
  /** A pod operation under a PodUnavailableBudget, for the main thread's guard (answer: `pubDecided`). */
  | { type: 'pub'; id: number; query: PubQuery }
  /** Binding a new pod to its budget: the main thread reads the pod's ReplicaSet (answer: `pubWorkloadFound`). */
  | { type: 'pubWorkload'; id: number; namespace: string; replicaSet: WorkloadRef }
  /** WorkloadSpread: the main thread records a new pod in its subset (answer: `spreadAssigned`). */
  | { type: 'spread'; id: number; query: SpreadQuery };
