import { describe, expect, it } from 'vitest';
import type { MutablePod } from '../../kube/types.js';
import { applyJsonPatch } from '../admission/json-patch.js';
import type { AdmissionRequest } from '../admission/types.js';
import { podMutatingHandler, type PodMutationSources } from './pod.js';

const RELATED = 'kruise.io/related-pub';

function create(pod: MutablePod, namespace = 'shop'): AdmissionRequest {
  return {
    uid: 'u-1',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace,
    operation: 'CREATE',
    object: pod,
  };
}

const appPod = (annotations?: Record<string, string>): MutablePod => ({
  metadata: { name: 'web-0', labels: { app: 'web' }, ...(annotations ? { annotations } : {}) },
  spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }] },
});

/** Sources with no SidecarSet, binding pods through `relatedPub`. */
function sources(relatedPub?: PodMutationSources['relatedPub']): PodMutationSources {
  return { sidecarSets: () => [], namespaceLabels: () => ({}), revisions: () => [], relatedPub };
}

async function admitted(pod: MutablePod, src: PodMutationSources): Promise<MutablePod> {
  const decision = await podMutatingHandler(src)(create(pod));
  expect(decision.allowed).toBe(true);
  return decision.allowed && decision.patch ? applyJsonPatch(pod, decision.patch) : pod;
}

describe('podMutatingHandler: PodUnavailableBudget binding', () => {
  it('names the budget the binder chose, keeping the other annotations', async () => {
    const asked: [string | undefined, string][] = [];
    const pod = await admitted(
      appPod({ team: 'a' }),
      sources((p, namespace) => {
        asked.push([p.metadata?.labels?.app, namespace]);
        return Promise.resolve('web-budget');
      }),
    );
    expect(pod.metadata?.annotations).toEqual({ team: 'a', [RELATED]: 'web-budget' });
    expect(asked).toEqual([['web', 'shop']]);
  });

  it('replaces a related-pub the pod came with (a copied template), as OpenKruise', async () => {
    const pod = await admitted(
      appPod({ [RELATED]: 'old' }),
      sources(() => Promise.resolve('web-budget')),
    );
    expect(pod.metadata?.annotations?.[RELATED]).toBe('web-budget');
  });

  it('leaves the pod alone without a budget, or with the gates off (no binder)', async () => {
    expect(await podMutatingHandler(sources(() => Promise.resolve(undefined)))(create(appPod()))).toEqual({
      allowed: true,
    });
    expect(await podMutatingHandler(sources())(create(appPod()))).toEqual({ allowed: true });
  });
});
