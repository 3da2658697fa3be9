/**
 * The preNormal lifecycle hook: new pods stay PreparingNormal (and unavailable) until every label
 * and finalizer of the hook is on them. Our version of OpenKruise's "creates with lifecycle
 * preNormal finalizer".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/kube.js';
import {
  cloneSet,
  createCloneSet,
  env,
  livePods,
  namespace,
  patchPod,
  settled,
  startController,
  statusReaches,
  type RunningController,
} from './harness.js';

const e = env();
const running: RunningController[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

describe('CloneSet lifecycle', () => {
  it('preNormal: pods stay PreparingNormal until the hook finalizer is added, then become Normal and available', async () => {
    const ns = await namespace(e, 'cs-prenormal');
    running.push(await startController(e, ns));
    await createCloneSet(
      e,
      ns,
      cloneSet('web', { replicas: 2, lifecycle: { preNormal: { finalizersHandler: ['example.com/registered'] } } }),
    );
    const pods = await eventually('2 pods running', async () => {
      const p = await livePods(e, ns, 'web');
      return p.length === 2 && p.every((x) => x.status?.phase === 'Running') && p;
    });
    // Once the status counts both pods ready, the controller has reconciled them as they are now:
    // ready, yet neither Normal nor available.
    const waiting = await statusReaches(e, ns, 'web', '2 pods ready', (s) => s.replicas === 2 && s.readyReplicas === 2);
    expect(waiting.status?.availableReplicas).toBe(0);
    for (const p of await livePods(e, ns, 'web')) {
      expect(p.metadata.labels?.['lifecycle.apps.kruise.io/state']).toBe('PreparingNormal');
    }

    for (const p of pods)
      await patchPod(e, ns, p.metadata.name, { metadata: { finalizers: ['example.com/registered'] } });
    await eventually('Normal', async () =>
      (await livePods(e, ns, 'web')).every((p) => p.metadata.labels?.['lifecycle.apps.kruise.io/state'] === 'Normal'),
    );
    await settled(e, ns, 'web', 2);
    // The status follows the labels by one reconcile: the one that patched the last pod to Normal
    // computed it from the pods as they were, and the watch event of that patch brings the next.
    await statusReaches(
      e,
      ns,
      'web',
      '2 pods available',
      (s) => s.availableReplicas === 2 && s.updatedAvailableReplicas === 2,
    );
    // Let the namespace go: the test's finalizers would otherwise hold the pods.
    for (const p of pods) await patchPod(e, ns, p.metadata.name, { metadata: { finalizers: null } });
  });
});
