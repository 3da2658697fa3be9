import { describe, expect, it } from 'vitest';
import { describeOutcome, planMigration, trimPatch } from './plan.js';

const crd = 'sidecarsets.apps.kruise.io';

describe('storage migration plan', () => {
  it('does nothing when only the storage version is stored', () => {
    expect(planMigration({ crd, storage: 'v1beta1', storedVersions: ['v1beta1'] })).toEqual({ action: 'none' });
  });

  it('migrates when older versions are listed (OpenKruise v1.9 upgraded from v1.8, or earlier Flotilla CRDs)', () => {
    const step = planMigration({ crd, storage: 'v1beta1', storedVersions: ['v1alpha1', 'v1beta1'] });
    expect(step).toEqual({ action: 'migrate', storage: 'v1beta1', from: ['v1alpha1', 'v1beta1'], to: ['v1beta1'] });
    expect(planMigration({ crd, storage: 'v1beta1', storedVersions: ['v1alpha1'] })).toMatchObject({
      action: 'migrate',
      to: ['v1beta1'],
    });
  });

  it('trims with a patch that fails if the list changed meanwhile', () => {
    const step = planMigration({ crd, storage: 'v1beta1', storedVersions: ['v1alpha1', 'v1beta1'] });
    if (step.action !== 'migrate') throw new Error('expected a migration');
    expect(trimPatch(step)).toEqual([
      { op: 'test', path: '/status/storedVersions', value: ['v1alpha1', 'v1beta1'] },
      { op: 'replace', path: '/status/storedVersions', value: ['v1beta1'] },
    ]);
  });

  it('describes success and failure for the event and the log', () => {
    const step = { action: 'migrate' as const, storage: 'v1beta1', from: ['v1alpha1', 'v1beta1'], to: ['v1beta1'] };
    expect(describeOutcome(step, { crd, migrated: 3, gone: 1, failed: 0 })).toEqual({
      type: 'Normal',
      reason: 'StorageVersionMigrated',
      message: 'rewrote 3 objects at v1beta1 (1 deleted meanwhile); storedVersions [v1alpha1, v1beta1] → [v1beta1]',
    });
    expect(describeOutcome(step, { crd, migrated: 2, gone: 0, failed: 1, firstError: 'a: denied' })).toEqual({
      type: 'Warning',
      reason: 'StorageVersionMigrationFailed',
      message: 'could not rewrite 1 of 3 objects at v1beta1 (a: denied); storedVersions stay [v1alpha1, v1beta1]',
    });
  });
});
