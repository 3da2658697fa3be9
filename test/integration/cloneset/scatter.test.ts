/**
 * updateStrategy.scatterStrategy on a real apiserver: pods matching a key=value term are spread
 * through the update order instead of being updated back to back. A weightPriority that puts the
 * matching pods first makes the difference visible: without scatter they would go a, a, a.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  cloneSet,
  createCloneSet,
  env,
  inPlaceState,
  livePods,
  namespace,
  patchCloneSet,
  patchPod,
  settled,
  startController,
  type RunningController,
} from './harness.js';

const e = env();
const running: RunningController[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

describe('CloneSet scatterStrategy', () => {
  it('spreads the zone=a pods through a one-at-a-time update that a priority would run back to back', async () => {
    const ns = await namespace(e, 'cs-scatter');
    running.push(await startController(e, ns));
    const zones = ['a', 'a', 'a', 'b', 'b', 'b'];
    await createCloneSet(
      e,
      ns,
      cloneSet('web', {
        replicas: zones.length,
        // minReadySeconds spaces the updates at least a second apart, so their second-precision
        // timestamps tell the order.
        minReadySeconds: 1,
        updateStrategy: {
          type: 'InPlaceIfPossible',
          maxUnavailable: 1,
          priorityStrategy: { weightPriority: [{ weight: 100, matchSelector: { matchLabels: { zone: 'a' } } }] },
          scatterStrategy: [{ key: 'zone', value: 'a' }],
        },
      }),
    );
    await settled(e, ns, 'web', zones.length);
    for (const [i, p] of (await livePods(e, ns, 'web')).entries()) {
      await patchPod(e, ns, p.metadata.name, { metadata: { labels: { zone: zones[i] } } });
    }
    // The controller must have seen the labels before the update starts.
    await new Promise((r) => setTimeout(r, 1000));
    await patchCloneSet(e, ns, 'web', {
      spec: { template: { spec: { containers: [{ name: 'main', image: 'registry.local/app:v2' }] } } },
    });
    await settled(e, ns, 'web', zones.length, 120_000);
    const order = (await livePods(e, ns, 'web'))
      .map((p) => ({ zone: p.metadata.labels!.zone!, at: Date.parse(inPlaceState(p).updateTimestamp) }))
      .sort((a, b) => a.at - b.at);
    expect(new Set(order.map((o) => o.at)).size).toBe(zones.length);
    // Recomputed before each step as OpenKruise does: 3a+3b puts an a first; then 2a+3b (the last
    // a held back for the end) puts a b before the next a; then 2a+2b starts with an a again.
    expect(order.slice(0, 3).map((o) => o.zone)).toEqual(['a', 'b', 'a']);
  });
});
