/**
 * CloneSet `updateStrategy.type: OnDelete` as OpenKruise v1.9.0 runs it, against a real apiserver
 * with kwok nodes. Its webhook refuses OnDelete but its CRD has no enum, so a CloneSet written
 * past the webhook (as here: no webhook runs in this suite) reaches the controller, which then
 * never updates a pod itself: only pods deleted by hand, or added by a scale-up, come back at the
 * new revision.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LABEL_CONTROLLER_REVISION_HASH } from '@flotilla/api';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import {
  cloneSet,
  condition,
  createCloneSet,
  env,
  events,
  getCloneSet,
  livePods,
  namespace,
  patchCloneSet,
  revisions,
  settled,
  startController,
  statusReaches,
  type Pod,
  type RunningController,
} from './harness.js';

const e = env();
const running: RunningController[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

const revisionOf = (p: Pod): string | undefined => p.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH];
/** What would change if the controller touched a pod (kwok's status writes aside). */
const fingerprint = (ps: Pod[]): string[] =>
  ps
    .map((p) => JSON.stringify([p.metadata.uid, p.metadata.labels, p.metadata.annotations ?? {}, p.spec?.containers]))
    .sort();

const state = (p: Pod): string | undefined => p.metadata.labels?.['lifecycle.apps.kruise.io/state'];

describe('CloneSet updateStrategy.type OnDelete (OpenKruise v1.9.0)', () => {
  it('leaves old pods alone; a deleted pod and a scale-up come back at the update revision', async () => {
    const ns = await namespace(e, 'cs-ondelete');
    running.push(await startController(e, ns));
    await createCloneSet(e, ns, cloneSet('web', { replicas: 3 }));
    const first = await settled(e, ns, 'web', 3);
    const v1 = first.status!.updateRevision!;

    // Switched to OnDelete with a new image, past any webhook (v1.9.0's refuses OnDelete).
    await patchCloneSet(e, ns, 'web', {
      spec: {
        updateStrategy: { type: 'OnDelete' },
        template: { spec: { containers: [{ name: 'main', image: 'registry.local/app:v2' }] } },
      },
    });
    const moved = await statusReaches(
      e,
      ns,
      'web',
      'a new update revision, no pod updated',
      (s, cs) => s.observedGeneration === cs.metadata?.generation && s.updateRevision !== v1,
    );
    const v2 = moved.status!.updateRevision!;
    expect(moved.status).toMatchObject({ replicas: 3, readyReplicas: 3, updatedReplicas: 0, currentRevision: v1 });
    expect((await revisions(e, ns)).map((r) => r.metadata.name).sort()).toEqual([v1, v2].sort());

    // Several reconciles later, still untouched: same pods, labels, annotations and images, all at v1.
    const before = await livePods(e, ns, 'web');
    await patchCloneSet(e, ns, 'web', { metadata: { annotations: { 'example.com/poke': '1' } } });
    await new Promise((r) => setTimeout(r, 3000));
    const after = await livePods(e, ns, 'web');
    expect(fingerprint(after)).toEqual(fingerprint(before));
    expect(after.map(revisionOf)).toEqual([v1, v1, v1]);
    expect((await events(e, ns, 'web')).filter((ev) => ev.reason.startsWith('SuccessfulUpdatePod'))).toEqual([]);

    // A pod deleted by hand is replaced at the update revision. As in v1.9.0, whose Update()
    // returns before refreshing any pod, the new pod is never moved to Normal nor given
    // InPlaceUpdateReady=True, so its readiness gate keeps it unready.
    const victim = before[0]!;
    await e.rest.request({ method: 'DELETE', path: resourcePath(Resources.pods, ns, victim.metadata.name) });
    await statusReaches(e, ns, 'web', 'one pod at v2', (s) => s.replicas === 3 && s.updatedReplicas === 1);
    const replaced = await livePods(e, ns, 'web');
    const fresh = replaced.filter((p) => revisionOf(p) === v2);
    expect(fresh).toHaveLength(1);
    expect(replaced.map((p) => p.metadata.uid)).not.toContain(victim.metadata.uid);
    expect(state(fresh[0]!)).toBe('PreparingNormal');
    expect(condition(fresh[0]!, 'InPlaceUpdateReady')).toBeUndefined();
    const held = await getCloneSet(e, ns, 'web');
    expect(held.status).toMatchObject({ updatedReplicas: 1, updatedReadyReplicas: 0, readyReplicas: 2 });

    // A scale-up adds pods at the update revision; the old ones stay.
    await patchCloneSet(e, ns, 'web', { spec: { replicas: 4 } });
    await statusReaches(e, ns, 'web', 'two pods at v2', (s) => s.replicas === 4 && s.updatedReplicas === 2);
    const scaled = await livePods(e, ns, 'web');
    expect(
      scaled
        .filter((p) => revisionOf(p) === v1)
        .map((p) => p.metadata.uid)
        .sort(),
    ).toEqual(
      before
        .slice(1)
        .map((p) => p.metadata.uid)
        .sort(),
    );
  });
});
