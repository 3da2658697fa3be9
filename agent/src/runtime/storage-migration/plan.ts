/**
 * What a storage-version migration of one CRD has to do, decided from its definition and the
 * apiserver's `status.storedVersions`, pure. The apiserver refuses a CRD whose stored versions it
 * no longer serves, and OpenKruise never trims the list, so a cluster that ever stored v1alpha1
 * keeps it listed until every object was rewritten at the storage version: then the list can be
 * cut to the storage version alone.
 */

export interface StoredState {
  /** `<plural>.<group>` */
  crd: string;
  /** The version the CRD stores now (from its definition). */
  storage: string;
  /** `status.storedVersions` as the apiserver reports it. */
  storedVersions: readonly string[];
}

export type MigrationStep =
  | { action: 'none' }
  /** Rewrite every object at `storage`, then replace `storedVersions` (guarded by the old list). */
  | { action: 'migrate'; storage: string; from: readonly string[]; to: readonly string[] };

export function planMigration(state: StoredState): MigrationStep {
  const others = state.storedVersions.filter((v) => v !== state.storage);
  if (others.length === 0) return { action: 'none' };
  return { action: 'migrate', storage: state.storage, from: state.storedVersions, to: [state.storage] };
}

/** The JSON patch that trims storedVersions, failing if the list changed since it was read. */
export function trimPatch(step: Extract<MigrationStep, { action: 'migrate' }>): object[] {
  return [
    { op: 'test', path: '/status/storedVersions', value: step.from },
    { op: 'replace', path: '/status/storedVersions', value: step.to },
  ];
}

export interface KindOutcome {
  crd: string;
  migrated: number;
  gone: number;
  failed: number;
  /** The first failure, for the event and the log. */
  firstError?: string;
}

/** The event (reason, message) and log message for one finished migration of a kind. */
export function describeOutcome(
  step: Extract<MigrationStep, { action: 'migrate' }>,
  outcome: KindOutcome,
): { type: 'Normal' | 'Warning'; reason: string; message: string } {
  const total = outcome.migrated + outcome.gone + outcome.failed;
  const versions = (v: readonly string[]): string => `[${v.join(', ')}]`;
  if (outcome.failed > 0) {
    return {
      type: 'Warning',
      reason: 'StorageVersionMigrationFailed',
      message:
        `could not rewrite ${outcome.failed} of ${total} objects at ${step.storage}` +
        `${outcome.firstError ? ` (${outcome.firstError})` : ''}; storedVersions stay ${versions(step.from)}`,
    };
  }
  return {
    type: 'Normal',
    reason: 'StorageVersionMigrated',
    message:
      `rewrote ${outcome.migrated} objects at ${step.storage}` +
      `${outcome.gone ? ` (${outcome.gone} deleted meanwhile)` : ''}; storedVersions ${versions(step.from)} → ${versions(step.to)}`,
  };
}
