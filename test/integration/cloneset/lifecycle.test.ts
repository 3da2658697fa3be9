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
  getCloneSet,
  livePods,
  namespace,
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
    await new Promise((r) => setTimeout(r, 1000));
    for (const p of await livePods(e, ns, 'web')) {
      expect(p.metadata.labels?.['lifecycle.apps.kruise.io/state']).toBe('PreparingNormal');
    }
    expect((await getCloneSet(e, ns, 'web')).status).toMatchObject({ replicas: 2, availableReplicas: 0 });

    for (const p of pods)
      await patchPod(e, ns, p.metadata.name, { metadata: { finalizers: ['example.com/registered'] } });
    await eventually('Normal', async () =>
      (await livePods(e, ns, 'web')).every((p) => p.metadata.labels?.['lifecycle.apps.kruise.io/state'] === 'Normal'),
    );
    const cs = await settled(e, ns, 'web', 2);
    expect(cs.status?.availableReplicas).toBe(2);
    // Let the namespace go: the test's finalizers would otherwise hold the pods.
    for (const p of pods) await patchPod(e, ns, p.metadata.name, { metadata: { finalizers: null } });
  });
});
