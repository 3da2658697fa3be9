/** How the hub reads one cluster's copy of a workload against the revision it should run. */
export type HealthState = 'Healthy' | 'Progressing' | 'Degraded' | 'Stale' | 'Unknown';

export interface HealthVerdict {
  state: HealthState;
  /** A short CamelCase reason, stable for machines (e.g. `WaitingForUpdatedPods`). */
  reason: string;
  /** One sentence for people. */
  message: string;
}

export function verdict(state: HealthState, reason: string, message: string): HealthVerdict {
  return { state, reason, message };
}
