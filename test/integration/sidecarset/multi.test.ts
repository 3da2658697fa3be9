/**
 * Two SidecarSets on the same pods share one SidecarSetUpgradable condition (OpenKruise's "multi
 * sidecarSet upgrade sidecar container, check pod condition"): while one of them changed more
 * than images the pods stay not upgradable, even after the other upgraded them; once both can
 * upgrade, the pods are upgradable again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { eventually, podCondition } from '../helpers/kube.js';
import { imageOf, startSidecarSetSuite, type SidecarSetStatus, type SidecarSetSuite } from './support.js';

let s: SidecarSetSuite;
let first: string;
let second: string;
const NAMES = ['mu-0', 'mu-1'];
const pods = (): Promise<V1Pod[]> => s.pods('app=mu');
const SLEEP = ['tail', '-f', '/dev/null'];

/** Waits until the SidecarSet's status has caught up with its spec and shows `expected`. */
async function statusOf(name: string, expected: SidecarSetStatus): Promise<void> {
  await eventually(
    `${name} status ${JSON.stringify(expected)}`,
    async () => {
      const ss = await s.get(name);
      const status = ss.status ?? {};
      return (
        status.observedGeneration === ss.metadata.generation &&
        Object.entries(expected).every(([k, v]) => status[k as keyof SidecarSetStatus] === v)
      );
    },
    60_000,
  );
}

describe('several SidecarSets upgrading the same pods', () => {
  beforeAll(async () => {
    s = await startSidecarSetSuite('mu', true);
    const selector = { matchLabels: { app: 'mu' } };
    first = await s.create('mu-1', {
      selector,
      containers: [{ name: 'sc1', image: 'registry.local/sc1:v1', command: SLEEP }],
      updateStrategy: { type: 'RollingUpdate' },
    });
    second = await s.create('mu-2', {
      selector,
      containers: [{ name: 'sc2', image: 'registry.local/sc2:v1' }],
      updateStrategy: { type: 'RollingUpdate' },
    });
    await s.waitInWebhook(first, { app: 'mu' });
    await s.waitInWebhook(second, { app: 'mu' });
    await s.createPods(NAMES, { app: 'mu' });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('keeps the pods not upgradable while one SidecarSet changed more than images, whatever the other does', async () => {
    await s.patch(first, {
      spec: { containers: [{ name: 'sc1', image: 'registry.local/sc1:v1', command: ['sleep', '1000'] }] },
    });
    await statusOf(first, { matchedPods: 2, updatedPods: 0, updatedReadyPods: 0, readyPods: 2 });
    await eventually('pods marked not upgradable', async () =>
      (await pods()).every((p) => podCondition(p, 'SidecarSetUpgradable') === 'False'),
    );

    await s.patch(second, { spec: { containers: [{ name: 'sc2', image: 'registry.local/sc2:v2' }] } });
    await statusOf(second, { matchedPods: 2, updatedPods: 2, updatedReadyPods: 2, readyPods: 2 });
    for (const p of await pods()) {
      expect(imageOf(p, 'sc2')).toBe('registry.local/sc2:v2');
      expect(imageOf(p, 'sc1'), 'the first SidecarSet upgraded nothing').toBe('registry.local/sc1:v1');
      expect(podCondition(p, 'SidecarSetUpgradable'), `${p.metadata?.name}: the first SidecarSet still cannot`).toBe(
        'False',
      );
    }
  });

  it('makes the pods upgradable once every SidecarSet can upgrade them', async () => {
    const uids = (await pods()).map((p) => p.metadata!.uid).sort();
    await s.patch(first, { spec: { containers: [{ name: 'sc1', image: 'registry.local/sc1:v2', command: SLEEP }] } });
    await statusOf(first, { matchedPods: 2, updatedPods: 2, updatedReadyPods: 2, readyPods: 2 });
    await eventually('pods upgradable', async () =>
      (await pods()).every((p) => podCondition(p, 'SidecarSetUpgradable') === 'True'),
    );
    const now = await pods();
    expect(now.map((p) => imageOf(p, 'sc1'))).toEqual(['registry.local/sc1:v2', 'registry.local/sc1:v2']);
    expect(now.map((p) => p.metadata!.uid).sort(), 'upgraded in place').toEqual(uids);
    const message = now[0]!.status?.conditions?.find((c) => c.type === 'SidecarSetUpgradable')?.message;
    expect(JSON.parse(message ?? '{}')).toEqual({ [first]: true, [second]: true });
  });
});
