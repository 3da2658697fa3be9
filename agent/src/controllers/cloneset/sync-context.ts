/**
 * What the actors (scale.ts, update.ts, ...) share during one reconcile of one CloneSet.
 */
import type { Logger } from 'pino';
import type { EventRecorder } from '../../runtime/events.js';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import type { CloneSetClient } from './client.js';
import type { PlanOptions } from './plan.js';
import type { Pod } from '../../kube/types.js';
import type { CloneSet } from './types.js';

/** Tunables of the controller; defaults in index.ts. */
export interface CloneSetControllerOptions {
  /** Most pod creates in flight at once within a slow-start batch (bounded by the apiserver's inflight limit). */
  maxConcurrentCreates: number;
  /** Most pod updates (refresh, in-place, recreate marks) in flight at once. */
  maxConcurrentWrites: number;
  /** How often to look again while expectations are unmet (events normally come sooner). */
  expectationRecheckMs: number;
  /** OpenKruise's feature gates and flags that change the arithmetic. */
  plan: PlanOptions;
}

export interface SyncContext {
  /** `namespace/name` of the CloneSet: the expectations key. */
  key: string;
  /** The defaulted CloneSet. */
  cs: CloneSet;
  client: CloneSetClient;
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  events: EventRecorder;
  log: Logger;
  now: number;
  options: CloneSetControllerOptions;
}

/** A copy of a cached (frozen) pod that may be modified. */
export function clonePod(pod: Pod): Pod {
  return structuredClone(pod);
}
