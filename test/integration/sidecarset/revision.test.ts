/**
 * injectionStrategy.revision on a real cluster (OpenKruise's "InjectionStrategy.Revision checker"
 * and "inject pod sidecar during canary upgrades"): new pods get a pinned revision by name or by
 * custom version, Partial pins it only outside the update selector, and a SidecarSet naming a
 * revision that does not exist is refused with the field named.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { eventually, podCondition } from '../helpers/kube.js';
import { imageOf, startSidecarSetSuite, type SidecarSetSuite } from './support.js';

const CUSTOM_VERSION = 'apps.kruise.io/sidecarset-custom-version';
let s: SidecarSetSuite;

const controllerRevisionOf = (pod: V1Pod, ss: string): string | undefined =>
  (
    JSON.parse(pod.metadata?.annotations?.['kruise.io/sidecarset-hash'] ?? '{}') as Record<
      string,
      { controllerRevision?: string }
    >
  )[ss]?.controllerRevision;

/** Waits for the controller to record the SidecarSet's current spec as its latest revision. */
async function latestRevision(name: string): Promise<string> {
  return eventually(`latest revision of ${name}`, async () => {
    const ss = await s.get(name);
    return (
      ss.status?.observedGeneration === (ss.metadata as { generation?: number }).generation && ss.status?.latestRevision
    );
  });
}

describe('SidecarSet injection revision', () => {
  beforeAll(async () => {
    s = await startSidecarSetSuite('rev', true);
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('injects the revision named by revisionName or customVersion instead of the latest', async () => {
    const name = await s.create(
      'pin',
      { selector: { matchLabels: { app: 'pin' } }, containers: [{ name: 'sc', image: 'registry.local/sc:v1' }] },
      { [CUSTOM_VERSION]: 'one' },
    );
    const r1 = await latestRevision(name);
    await s.patch(name, {
      metadata: { labels: { [CUSTOM_VERSION]: 'two' } },
      spec: { containers: [{ name: 'sc', image: 'registry.local/sc:v2' }] },
    });
    const r2 = await eventually('a second revision', async () => {
      const r = await latestRevision(name);
      return r !== r1 && r;
    });
    const revs = await s.k.apps.listNamespacedControllerRevision({
      namespace: s.agentNs,
      labelSelector: `kruise.io/sidecarset-name=${name}`,
    });
    expect(revs.items.find((r) => r.metadata!.name === r1)?.metadata?.labels?.[CUSTOM_VERSION]).toBe('one');
    expect(revs.items.find((r) => r.metadata!.name === r2)?.metadata?.labels?.[CUSTOM_VERSION]).toBe('two');

    await s.patch(name, { spec: { injectionStrategy: { revision: { revisionName: r1 } } } });
    const pinned = await eventually('a new pod gets revision one', async () => {
      const p = await s.admit({ app: 'pin' });
      return imageOf(p, 'sc') === 'registry.local/sc:v1' && p;
    });
    expect(controllerRevisionOf(pinned, name)).toBe(r1);

    await s.patch(name, { spec: { injectionStrategy: { revision: { revisionName: null, customVersion: 'two' } } } });
    const byVersion = await eventually('a new pod gets custom version two', async () => {
      const p = await s.admit({ app: 'pin' });
      return imageOf(p, 'sc') === 'registry.local/sc:v2' && p;
    });
    expect(controllerRevisionOf(byVersion, name)).toBe(r2);
    await s.patch(name, { spec: { injectionStrategy: { revision: { customVersion: 'one' } } } });
    await eventually(
      'a new pod gets custom version one',
      async () => imageOf(await s.admit({ app: 'pin' }), 'sc') === 'registry.local/sc:v1',
    );

    // Rolling the spec back reuses revision one as the newest instead of creating a third.
    await s.patch(name, { spec: { containers: [{ name: 'sc', image: 'registry.local/sc:v1' }] } });
    await eventually('revision one is the latest again', async () => (await latestRevision(name)) === r1);
    const after = await s.k.apps.listNamespacedControllerRevision({
      namespace: s.agentNs,
      labelSelector: `kruise.io/sidecarset-name=${name}`,
    });
    expect(after.items.map((r) => r.metadata!.name).sort()).toEqual([r1, r2].sort());
    const number = (n: string): number => after.items.find((r) => r.metadata!.name === n)!.revision;
    expect(number(r1)).toBeGreaterThan(number(r2));
  });

  it('refuses a SidecarSet whose injection revision does not exist, naming the field', async () => {
    const name = await s.create('missing', {
      selector: { matchLabels: { app: 'missing' } },
      containers: [{ name: 'sc-missing', image: 'registry.local/sc:v1' }],
    });
    const refusal = async (revision: Record<string, string>): Promise<string> => {
      const err = await s.patch(name, { spec: { injectionStrategy: { revision } } }).then(
        () => undefined,
        (e: unknown) => e as { code?: number; body?: string },
      );
      expect(err?.code).toBe(422);
      return (JSON.parse(err?.body ?? '{}') as { message?: string }).message ?? '';
    };
    expect(await refusal({ revisionName: 'no-such-revision' })).toContain(
      'spec.injectionStrategy.revision.revisionName',
    );
    expect(await refusal({ customVersion: 'nope' })).toContain('spec.injectionStrategy.revision.customVersion');
  });

  it('canary: with policy Partial, pods the update selector picks get the latest, the others the pinned version', async () => {
    const name = await s.create(
      'canary',
      {
        selector: { matchLabels: { app: 'canary' } },
        containers: [{ name: 'sc-canary', image: 'registry.local/nginx:stable' }],
      },
      { [CUSTOM_VERSION]: '0' },
    );
    await s.waitInWebhook(name, { app: 'canary' });
    await s.createPods(
      ['stable-0', 'canary-0'],
      { app: 'canary' },
      {
        'stable-0': { version: 'stable' },
        'canary-0': { version: 'canary' },
      },
    );
    await latestRevision(name);
    // An env change as well: existing pods cannot be upgraded in place and keep the stable sidecar.
    await s.patch(name, {
      metadata: { labels: { [CUSTOM_VERSION]: '1' } },
      spec: {
        containers: [
          { name: 'sc-canary', image: 'registry.local/nginx:canary', env: [{ name: 'SOME_ENV', value: 'x' }] },
        ],
        updateStrategy: { selector: { matchLabels: { version: 'canary' } } },
        injectionStrategy: { revision: { customVersion: '0', policy: 'Partial' } },
      },
    });
    await eventually('status: 2 matched, none updated, 2 ready', async () => {
      const st = (await s.get(name)).status;
      return st?.matchedPods === 2 && st.updatedPods === 0 && st.readyPods === 2;
    });
    for (const p of await s.pods('app=canary')) {
      expect(imageOf(p, 'sc-canary')).toBe('registry.local/nginx:stable');
    }
    await eventually(
      'the webhook injects the canary version into canary pods',
      async () =>
        imageOf(await s.admit({ app: 'canary', version: 'canary' }), 'sc-canary') === 'registry.local/nginx:canary',
    );
    await eventually('the canary pod is marked not upgradable', async () => {
      const canary = (await s.pods('version=canary'))[0];
      return canary && podCondition(canary, 'SidecarSetUpgradable') === 'False';
    });
    await s.createPods(
      ['stable-1', 'canary-1'],
      { app: 'canary' },
      {
        'stable-1': { version: 'stable' },
        'canary-1': { version: 'canary' },
      },
    );
    const images = new Map((await s.pods('app=canary')).map((p) => [p.metadata!.name!, imageOf(p, 'sc-canary')]));
    expect(Object.fromEntries(images)).toEqual({
      'stable-0': 'registry.local/nginx:stable',
      'canary-0': 'registry.local/nginx:stable',
      'stable-1': 'registry.local/nginx:stable',
      'canary-1': 'registry.local/nginx:canary',
    });
  });
});
