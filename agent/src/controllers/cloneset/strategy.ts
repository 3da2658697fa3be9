/**
 * The CloneSet's int-or-percent knobs resolved to pod counts, rounded exactly as OpenKruise
 * rounds them (calculateDiffsWithExpectation, util.CalculatePartitionReplicas, k8s
 * intstr.GetScaledValueFromIntOrPercent).
 */
import { DEFAULT_CLONESET_MAX_UNAVAILABLE, parseIntOrPercent, type IntOrString } from '@flotilla/api';
import type { CloneSet } from './types.js';

/**
 * An int-or-percent against `total`: integers as they are, percentages rounded up or down.
 * Undefined when the value is malformed (OpenKruise then logs and uses 0).
 */
export function scaled(value: IntOrString, total: number, roundUp: boolean): number | undefined {
  const parsed = parseIntOrPercent(value);
  if (parsed.kind === 'int') return parsed.value;
  if (parsed.kind === 'invalid') return undefined;
  const exact = (parsed.value * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/**
 * Pods kept at the current revision. Rounds up, so any partition above "0%" keeps at least one
 * old pod; a percentage below 100% that still covers every pod of a CloneSet with more than one
 * replica leaves one pod to update ("99%" of 4 → 3). Clamped to [0, replicas]; malformed → 0.
 */
export function partitionReplicas(partition: IntOrString | undefined, replicas: number): number {
  if (partition === undefined) return 0;
  let value = scaled(partition, replicas, true);
  if (value === undefined) return 0;
  if (replicas > 1 && value === replicas && typeof partition === 'string' && partition !== '100%') {
    value = replicas - 1;
  }
  return Math.max(Math.min(value, replicas), 0);
}

/** The resolved strategy numbers calculateDiffs works with. */
export interface ResolvedStrategy {
  replicas: number;
  /** Pods kept at the current revision. */
  partition: number;
  /** Pods allowed above replicas while updating or replacing; 0 while paused. Rounds up. */
  maxSurge: number;
  /** Pods allowed unavailable while updating: rounds up when maxSurge is 0, down otherwise. */
  maxUnavailable: number;
  /** Pods allowed unavailable while scaling up (scaleStrategy.maxUnavailable); unset = no limit. Rounds up. */
  scaleMaxUnavailable: number;
}

const MAX_INT32 = 2 ** 31 - 1;

/** Resolves the strategy of a (defaulted) CloneSet. */
export function resolveStrategy(cs: CloneSet): ResolvedStrategy {
  const replicas = cs.spec.replicas ?? 1;
  const update = cs.spec.updateStrategy ?? {};
  const partition = partitionReplicas(update.partition, replicas);
  let maxSurge = update.maxSurge === undefined ? 0 : (scaled(update.maxSurge, replicas, true) ?? 0);
  // Paused must not surge either (openkruise/kruise#1153).
  if (update.paused) maxSurge = 0;
  const maxUnavailable =
    scaled(update.maxUnavailable ?? DEFAULT_CLONESET_MAX_UNAVAILABLE, replicas, maxSurge === 0) ?? 0;
  const scaleLimit = cs.spec.scaleStrategy?.maxUnavailable;
  const scaleMaxUnavailable = scaleLimit === undefined ? MAX_INT32 : (scaled(scaleLimit, replicas, true) ?? 0);
  return { replicas, partition, maxSurge, maxUnavailable, scaleMaxUnavailable };
}
