import { describe, expect, it } from 'vitest';
import type { SpreadGuard, SpreadQuery } from '../../controllers/workloadspread/admission.js';
import { SettingsReader } from '../../settings/reader.js';
import type { AdmissionRequest } from '../admission/types.js';
import { defaultWebhookConfig, webhookConfig } from '../config.js';
import type { PodMutationSources } from '../mutating/pod.js';
import { webhookDefinitions, type WebhookHandlerDeps } from '../registry.js';
import { inOrder, podSpreadHandler, spreadDeletionOf } from './pod-spread-handler.js';

const MATCHED = 'apps.kruise.io/matched-workloadspread';

const placed = (extra: Record<string, unknown> = {}) => ({
  metadata: { name: 'p1', annotations: { [MATCHED]: '{"name":"ws","subset":"a"}' }, ...extra },
});

const request = (over: Partial<AdmissionRequest>): AdmissionRequest => ({
  uid: 'u',
  kind: { group: '', version: 'v1', kind: 'Pod' },
  resource: { group: '', version: 'v1', resource: 'pods' },
  namespace: 'ns',
  name: 'p1',
  operation: 'DELETE',
  ...over,
});

/** A guard recording what it was asked. */
function recording(): SpreadGuard & { asked: SpreadQuery[] } {
  const asked: SpreadQuery[] = [];
  return { asked, assign: (q) => (asked.push(q), Promise.resolve(undefined)) };
}

describe('spreadDeletionOf', () => {
  it('a DELETE of an active pod placed by a WorkloadSpread, or any eviction, is a deletion', () => {
    expect(spreadDeletionOf(request({ oldObject: placed(), dryRun: true }))).toEqual({
      namespace: 'ns',
      pod: placed(),
      dryRun: true,
      operation: 'DELETE',
    });
    expect(spreadDeletionOf(request({ operation: 'CREATE', subResource: 'eviction' }))).toEqual({
      namespace: 'ns',
      pod: { metadata: { name: 'p1' } },
      dryRun: false,
      operation: 'EVICT',
    });
  });

  it('leaves unplaced and terminating pods, subresources and updates alone', () => {
    const unplaced = { metadata: { name: 'p1' } };
    expect(spreadDeletionOf(request({ oldObject: unplaced }))).toBeUndefined();
    expect(
      spreadDeletionOf(request({ oldObject: placed({ deletionTimestamp: '2026-01-01T00:00:00Z' }) })),
    ).toBeUndefined();
    expect(spreadDeletionOf(request({ oldObject: placed(), subResource: 'status' }))).toBeUndefined();
    expect(spreadDeletionOf(request({ operation: 'UPDATE', oldObject: placed(), object: placed() }))).toBeUndefined();
  });
});

describe('podSpreadHandler and inOrder', () => {
  it('records through the guard and allows; a failing record is an error', async () => {
    const guard = recording();
    expect(await podSpreadHandler(guard)(request({ oldObject: placed() }))).toEqual({ allowed: true });
    expect(guard.asked.map((q) => q.operation)).toEqual(['DELETE']);
    const failing: SpreadGuard = { assign: () => Promise.reject(new Error('conflicts')) };
    await expect(podSpreadHandler(failing)(request({ oldObject: placed() }))).rejects.toThrow('conflicts');
  });

  it('stops at the first refusal, so a deletion a budget refuses is never recorded', async () => {
    const guard = recording();
    const refuse = () => ({ allowed: false as const, code: 403, reason: 'Forbidden', message: 'no' });
    expect(await inOrder([refuse, podSpreadHandler(guard)])(request({ oldObject: placed() }))).toMatchObject({
      allowed: false,
      message: 'no',
    });
    expect(guard.asked).toEqual([]);
  });
});

describe('the WorkloadSpread gate', () => {
  const pods = {} as PodMutationSources;
  const budget = (deleteGate: boolean): WebhookHandlerDeps['podBudget'] => ({
    gates: { deleteGate, updateGate: false, inPlaceResize: false },
    guard: { admit: () => Promise.resolve({ allowed: true }) } as unknown as NonNullable<
      WebhookHandlerDeps['podBudget']
    >['guard'],
  });
  const podRules = (deps: Partial<WebhookHandlerDeps>): Record<string, string[]> =>
    Object.fromEntries(
      webhookDefinitions({ pods, ...deps })
        .filter((d) => d.path === '/validate-pod')
        .map((d) => [d.name, d.rule.operations]),
    );

  it('is on by default, and read from --workloadspread-gate / FLOTILLA_WORKLOADSPREAD_GATE', () => {
    expect(defaultWebhookConfig('ns').workloadSpreadGate).toBe(true);
    const host = { hostname: () => 'n', fileExists: () => true, readFile: () => '' };
    const off = webhookConfig(new SettingsReader({}, { FLOTILLA_WORKLOADSPREAD_GATE: 'false' }, host), 'ns');
    expect(off.workloadSpreadGate).toBe(false);
    expect(webhookConfig(new SettingsReader({ workloadspreadGate: 'true' }, {}, host), 'ns').workloadSpreadGate).toBe(
      true,
    );
  });

  it('on: the pod DELETE and eviction webhooks exist even with the budget delete gate off', () => {
    const guard = recording();
    expect(podRules({ podBudget: budget(false), workloadSpread: { enabled: true, guard } })).toEqual({
      'vpod.kb.io': ['DELETE'],
      'vpodeviction.kb.io': ['CREATE'],
    });
    expect(podRules({ podBudget: budget(false), workloadSpread: { enabled: false, guard } })).toEqual({});
    expect(podRules({ podBudget: budget(true), workloadSpread: { enabled: false, guard } })).toEqual({
      'vpod.kb.io': ['DELETE'],
      'vpodeviction.kb.io': ['CREATE'],
    });
  });

  it('off: WorkloadSpreads are refused with OpenKruise’s message; on: validated', async () => {
    const validator = (enabled: boolean) =>
      webhookDefinitions({ pods, workloadSpread: { enabled } }).find((d) => d.name === 'vworkloadspread.kb.io')!;
    const create = request({
      operation: 'CREATE',
      kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'WorkloadSpread' },
      resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'workloadspreads' },
      object: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'WorkloadSpread',
        metadata: { name: 'ws', namespace: 'ns' },
        spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }, subsets: [{ name: 'a' }] },
      },
    });
    expect(await validator(false).handler(create)).toEqual({
      allowed: false,
      code: 403,
      reason: 'Forbidden',
      message: 'feature-gate WorkloadSpread is not enabled',
    });
    expect(await validator(true).handler(create)).toMatchObject({ allowed: true });
  });
});
