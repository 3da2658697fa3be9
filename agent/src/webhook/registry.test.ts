import { describe, expect, it } from 'vitest';
import type { PodMutationSources } from './mutating/pod.js';
import type { AdmissionRequest } from './admission/types.js';
import { PUB_GATES_OFF, webhookDefinitions } from './registry.js';

const guard = {
  admit: () => Promise.resolve({ allowed: true as const }),
  replicaSetWorkload: () => Promise.resolve(undefined),
};

const createPub: AdmissionRequest = {
  uid: 'u-1',
  kind: { group: 'policy.kruise.io', version: 'v1alpha1', kind: 'PodUnavailableBudget' },
  resource: { group: 'policy.kruise.io', version: 'v1alpha1', resource: 'podunavailablebudgets' },
  namespace: 'shop',
  name: 'web',
  operation: 'CREATE',
  object: {
    apiVersion: 'policy.kruise.io/v1alpha1',
    kind: 'PodUnavailableBudget',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1 },
  },
};

function pubWebhooks(deleteGate: boolean, updateGate: boolean) {
  const defs = webhookDefinitions({
    pods: {} as PodMutationSources,
    podBudget: { gates: { deleteGate, updateGate, inPlaceResize: false }, guard },
  });
  return {
    validate: defs.find((d) => d.path === '/validate-policy-kruise-io-podunavailablebudget')!.handler,
    podWebhooks: defs.filter((d) => d.path === '/validate-pod').map((d) => d.name),
  };
}

describe('PodUnavailableBudget webhooks and the PUB gates', () => {
  it.each([
    [true, false, ['vpod.kb.io', 'vpodeviction.kb.io']],
    [false, true, ['vpod.kb.io']],
  ])('accept a valid budget with a gate on (delete %s, update %s)', async (del, upd, podWebhooks) => {
    const { validate, podWebhooks: registered } = pubWebhooks(del, upd);
    expect(await validate(createPub)).toEqual({ allowed: true });
    expect(registered).toEqual(podWebhooks);
  });

  it('refuse every budget with both gates off, as v1.9 (400), and guard no pod', async () => {
    const { validate, podWebhooks } = pubWebhooks(false, false);
    expect(await validate(createPub)).toEqual({
      allowed: false,
      code: 400,
      reason: 'BadRequest',
      message: PUB_GATES_OFF,
    });
    expect(podWebhooks).toEqual([]);
  });
});
