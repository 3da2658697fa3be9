/**
 * What the actors (scale.ts, update.ts, ...) share during one reconcile of one CloneSet.
 */
import type { PubGuard } from '../podunavailablebudget/guard.js';
import type { Logger } from 'pino';
import type { EventRecorder } from '../../runtime/events.js';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import type { CloneSetClient } from './client.js';
import type { InPlaceOptions } from './inplace.js';
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
  /**
   * Gate InPlaceWorkloadVerticalScaling (OpenKruise alpha, off by default): container cpu/memory
   * changes are applied in place, through the pods' resize subresource.
   */
  inPlaceVerticalScaling: boolean;
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
  /** The in-place update's switches for this reconcile (the gate, whether pods/resize is served). */
  inPlace: InPlaceOptions;
  /**
   * With PodUnavailableBudgetUpdateGate: asked before each in-place update, which waits while the
   * pod's budget has nothing left (OpenKruise's cloneset_update.go).
   */
  pubGuard?: PubGuard;
}

/** A copy of a cached (frozen) pod that may be modified. */
export function clonePod(pod: Pod): Pod {
  return structuredClone(pod);
}
