/**
 * Which pods a SidecarSet upgrade takes, on a real cluster: priorityStrategy, scatterStrategy and
 * the update selector (OpenKruise's "multi sidecarSet upgrade ... and selector" scenario). The
 * order is observed through partition: with N − k kept back, exactly the first k pods in the
 * upgrade order are upgraded, whatever the timing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { eventually, podCondition } from '../helpers/kube.js';
import { imageOf, startSidecarSetSuite, type SidecarSetSuite } from './support.js';

let s: SidecarSetSuite;
let name: string;
const NAMES = ['st-0', 'st-1', 'st-2', 'st-3', 'st-4', 'st-5'];
const pods = (): Promise<V1Pod[]> => s.pods('app=st');
const at = async (image: string): Promise<string[]> =>
  (await pods())
    .filter((p) => imageOf(p, 'sc') === image)
    .map((p) => p.metadata!.name!)
    .sort();
const image = (tag: string): { containers: { name: string; image: string }[] } => ({
  containers: [{ name: 'sc', image: `registry.local/sc:${tag}` }],
});
/** Waits until exactly `count` pods run `tag` and stay so for a few seconds; returns them. */
async function settled(tag: string, count: number): Promise<string[]> {
  await eventually(
    `${count} pod(s) at ${tag}`,
    async () => (await at(`registry.local/sc:${tag}`)).length === count,
    60_000,
  );
  await new Promise((r) => setTimeout(r, 3000));
  const names = await at(`registry.local/sc:${tag}`);
  expect(names, `still ${count} pod(s) at ${tag}`).toHaveLength(count);
  return names;
}

describe('SidecarSet upgrade order and selection', () => {
  beforeAll(async () => {
    s = await startSidecarSetSuite('st', true);
    name = await s.create('st', { selector: { matchLabels: { app: 'st' } }, ...image('v1') });
    await s.waitInWebhook(name, { app: 'st' });
    // Zones: st-0..2 in x, st-3..5 in y. Tiers pick the priority order.
    await s.createPods(
      NAMES,
      { app: 'st' },
      {
        'st-0': { zone: 'x' },
        'st-1': { zone: 'x', tier: 'silver' },
        'st-2': { zone: 'x', tier: 'gold' },
        'st-3': { zone: 'y' },
        'st-4': { zone: 'y' },
        'st-5': { zone: 'y', canary: 'true' },
      },
    );
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('upgrades pods by weightPriority: the heaviest first', async () => {
    const priorityStrategy = {
      weightPriority: [
        { weight: 100, matchSelector: { matchLabels: { tier: 'gold' } } },
        { weight: 50, matchSelector: { matchLabels: { tier: 'silver' } } },
      ],
    };
    await s.patch(name, { spec: { ...image('v2'), updateStrategy: { partition: 5, priorityStrategy } } });
    expect(await settled('v2', 1)).toEqual(['st-2']);
    await s.patch(name, { spec: { updateStrategy: { partition: 4 } } });
    expect(await settled('v2', 2)).toEqual(['st-1', 'st-2']);
  });

  it('spreads the first upgrades over the zones with scatterStrategy (key=*)', async () => {
    // Without scattering st-1 and st-2 (zone x, just restarted, so first in ActivePods order)
    // would go first again.
    await s.patch(name, {
      spec: {
        ...image('v3'),
        updateStrategy: { partition: 4, priorityStrategy: null, scatterStrategy: [{ key: 'zone', value: '*' }] },
      },
    });
    const first = await settled('v3', 2);
    const zones = (await pods()).filter((p) => first.includes(p.metadata!.name!)).map((p) => p.metadata!.labels!.zone);
    expect(zones.sort()).toEqual(['x', 'y']);
  });

  it('upgrades only the pods the update selector picks, and the rest once it is removed', async () => {
    await s.patch(name, {
      spec: {
        ...image('v4'),
        updateStrategy: {
          partition: null,
          scatterStrategy: null,
          maxUnavailable: 6,
          selector: { matchLabels: { canary: 'true' } },
        },
      },
    });
    expect(await settled('v4', 1)).toEqual(['st-5']);
    await s.patch(name, { spec: { updateStrategy: { selector: null } } });
    await eventually('all pods at v4', async () => (await at('registry.local/sc:v4')).length === 6, 60_000);
    for (const p of await pods()) expect(podCondition(p, 'SidecarSetUpgradable')).toBe('True');
  });
});
