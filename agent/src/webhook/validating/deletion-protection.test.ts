import { describe, expect, it } from 'vitest';
import {
  deletionProtectionStep,
  isActivePod,
  isBoundPvc,
  LABEL_DELETE_PROTECTION,
  type ProtectedKind,
  type ProtectedObject,
  type ProtectionGates,
  type ProtectionStep,
  type ProtectionVerdict,
} from './deletion-protection.js';

const ON: ProtectionGates = { resourcesDeletionProtection: true, crdCascading: true };
const PREFIX = `forbidden by ResourcesProtectionDeletion for ${LABEL_DELETE_PROTECTION}=`;

const labelled = (value: string | undefined, extra: ProtectedObject = {}): ProtectedObject => ({
  ...extra,
  metadata: {
    name: 'x',
    ...(value === undefined ? {} : { labels: { [LABEL_DELETE_PROTECTION]: value } }),
    ...extra.metadata,
  },
});

/** The verdict, answering any counts with `counts`. */
function verdict(step: ProtectionStep, counts: number[] = []): ProtectionVerdict {
  return 'count' in step ? step.decide(counts) : step;
}

const crd: ProtectedObject = {
  spec: {
    group: 'example.com',
    names: { plural: 'widgets' },
    versions: [{ name: 'v1' }, { name: 'v2', storage: true }],
  },
};

describe('deletionProtectionStep', () => {
  it('refuses every protected kind labelled Always', () => {
    for (const kind of ['Namespace', 'CustomResourceDefinition', 'Workload', 'Service', 'Ingress'] as ProtectedKind[]) {
      expect(deletionProtectionStep(kind, labelled('Always'), ON)).toEqual({
        allowed: false,
        message: `${PREFIX}Always`,
      });
    }
  });

  it('allows without the label, with another value (the values are case-sensitive), or while deleting', () => {
    for (const value of [undefined, '', 'always', 'cascading', 'Never']) {
      expect(deletionProtectionStep('Service', labelled(value), ON)).toEqual({ allowed: true });
      expect(deletionProtectionStep('Workload', labelled(value, { spec: { replicas: 3 } }), ON)).toEqual({
        allowed: true,
      });
    }
    const deleting = labelled('Always', { metadata: { deletionTimestamp: '2026-06-22T08:00:00Z' } });
    expect(deletionProtectionStep('Namespace', deleting, ON)).toEqual({ allowed: true });
    expect(deletionProtectionStep('Namespace', undefined, ON)).toEqual({ allowed: true });
  });

  it('does nothing while the ResourcesDeletionProtection gate is off', () => {
    const off = { resourcesDeletionProtection: false, crdCascading: true };
    expect(deletionProtectionStep('Namespace', labelled('Always'), off)).toEqual({ allowed: true });
    expect(deletionProtectionStep('CustomResourceDefinition', labelled('Cascading', crd), off)).toEqual({
      allowed: true,
    });
  });

  it('Cascading: a namespace with active pods or Bound PVCs is refused, an empty one allowed', () => {
    const step = deletionProtectionStep('Namespace', labelled('Cascading'), ON);
    expect('count' in step && step.count).toEqual([
      { what: 'activePods', namespace: 'x' },
      { what: 'boundPvcs', namespace: 'x' },
    ]);
    expect(verdict(step, [2, 1])).toEqual({ allowed: false, message: `${PREFIX}Cascading and active pods 2>0` });
    expect(verdict(step, [0, 3])).toEqual({
      allowed: false,
      message: `${PREFIX}Cascading and "Bound" status pvc 3>0`,
    });
    expect(verdict(step, [0, 0])).toEqual({ allowed: true });
  });

  it('Cascading: a CRD is counted at its storage version, refused outright without the CRD gate', () => {
    const step = deletionProtectionStep('CustomResourceDefinition', labelled('Cascading', crd), ON);
    expect('count' in step && step.count).toEqual([
      { what: 'activeCustomResources', group: 'example.com', version: 'v2', plural: 'widgets' },
    ]);
    expect(verdict(step, [4])).toEqual({ allowed: false, message: `${PREFIX}Cascading and active CRs 4>0` });
    expect(verdict(step, [0])).toEqual({ allowed: true });
    const v1beta1 = { spec: { group: 'example.com', names: { plural: 'widgets' }, version: 'v1' } };
    const old = deletionProtectionStep('CustomResourceDefinition', labelled('Cascading', v1beta1), ON);
    expect('count' in old && old.count[0]).toMatchObject({ version: 'v1' });
    expect(
      deletionProtectionStep('CustomResourceDefinition', labelled('Cascading', crd), { ...ON, crdCascading: false }),
    ).toEqual({
      allowed: false,
      message: `${PREFIX}Cascading and feature-gate DeletionProtectionForCRDCascadingGate is not enabled`,
    });
  });

  it('Cascading: a workload is refused while spec.replicas is set and above 0', () => {
    const of = (replicas: number | null | undefined): ProtectionStep =>
      deletionProtectionStep('Workload', labelled('Cascading', { spec: { replicas } }), ON);
    expect(of(3)).toEqual({ allowed: false, message: `${PREFIX}Cascading and replicas 3>0` });
    expect(of(0)).toEqual({ allowed: true });
    expect(of(null)).toEqual({ allowed: true });
    expect(of(undefined)).toEqual({ allowed: true });
  });

  it('Cascading: Services and Ingresses know only Always', () => {
    expect(deletionProtectionStep('Service', labelled('Cascading'), ON)).toEqual({ allowed: true });
    expect(deletionProtectionStep('Ingress', labelled('Cascading'), ON)).toEqual({ allowed: true });
  });
});

describe('what counts', () => {
  it('active pods: not Succeeded or Failed, not being deleted', () => {
    expect(isActivePod({ status: { phase: 'Running' } })).toBe(true);
    expect(isActivePod({ status: { phase: 'Pending' } })).toBe(true);
    expect(isActivePod({})).toBe(true);
    expect(isActivePod({ status: { phase: 'Succeeded' } })).toBe(false);
    expect(isActivePod({ status: { phase: 'Failed' } })).toBe(false);
    expect(isActivePod({ metadata: { deletionTimestamp: '2026-06-22T08:00:00Z' }, status: { phase: 'Running' } })).toBe(
      false,
    );
  });

  it('PVCs: Bound and not being deleted', () => {
    expect(isBoundPvc({ status: { phase: 'Bound' } })).toBe(true);
    expect(isBoundPvc({ status: { phase: 'Pending' } })).toBe(false);
    expect(isBoundPvc({ metadata: { deletionTimestamp: '2026-06-22T08:00:00Z' }, status: { phase: 'Bound' } })).toBe(
      false,
    );
  });
});
