import { describe, expect, it } from 'vitest';
import { LABEL_CLONESET_INSTANCE_ID, LifecycleState, type CloneSetSpec } from '@flotilla/api';
import { planScale, type ScaleInput } from './scale-plan.js';
import { ago, cloneSet, NOW, pod, type PodOptions } from './testing/fixtures.js';

const NOW_TIME = ago(0);
import type { PersistentVolumeClaim, Pod } from '../../kube/types.js';

const p = (name: string, o: PodOptions = {}): Pod =>
  pod({ name, revision: 'cs-new', state: LifecycleState.Normal, ...o });

function input(spec: Partial<CloneSetSpec>, pods: Pod[], extra: Partial<ScaleInput> = {}): ScaleInput {
  let n = 0;
  return {
    cs: cloneSet(spec),
    pods,
    pvcs: [],
    currentRevision: 'cs-new',
    updateRevision: 'cs-new',
    now: NOW,
    // Deterministic ids: the alphabet's first letters.
    random: () => ((n++ % 27) + 0.5) / 27,
    ...extra,
  };
}

const removed = (plan: ReturnType<typeof planScale>): string[] =>
  plan.action.kind === 'remove' ? plan.action.pods.map((r) => `${r.pod.metadata.name}:${r.how}`) : [];

describe('planScale', () => {
  it('scale out from 0: creates every pod at the update revision', () => {
    const plan = planScale(input({ replicas: 3 }, []));
    expect(plan.action.kind).toBe('create');
    if (plan.action.kind !== 'create') return;
    expect(plan.action.pods.map((c) => c.revision)).toEqual(['update', 'update', 'update']);
    expect(new Set(plan.action.pods.map((c) => c.id)).size).toBe(3);
    expect(plan.action.pods.every((c) => /^[bcdfghjklmnpqrstvwxz2456789]{5}$/.test(c.id))).toBe(true);
  });

  it('scale out with a partition creates current-revision pods first to keep it', () => {
    const plan = planScale(
      input({ replicas: 4, updateStrategy: { partition: 2 } }, [p('old-1', { revision: 'cs-old' })], {
        currentRevision: 'cs-old',
      }),
    );
    expect(plan.action.kind === 'create' && plan.action.pods.map((c) => c.revision)).toEqual([
      'current',
      'update',
      'update',
    ]);
  });

  it('scaleStrategy.maxUnavailable limits creation by the pods already unavailable, and reports it', () => {
    const plan = planScale(
      input({ replicas: 5, scaleStrategy: { maxUnavailable: 2 } }, [p('starting', { ready: false })]),
    );
    expect(plan.action.kind === 'create' && plan.action.pods).toHaveLength(1);
    expect(plan.scaleUpLimited).toBe(1);
  });

  it('a limit of 0 still ends the scale step with nothing to create', () => {
    const plan = planScale(
      input({ replicas: 3, scaleStrategy: { maxUnavailable: 1 } }, [p('starting', { ready: false })]),
    );
    expect(plan.action).toEqual({ kind: 'create', pods: [] });
    expect(plan.scaleUpLimited).toBe(0);
  });

  it('reuses the instance ids of PVCs whose pod is gone before making new ones', () => {
    const pvc = (id: string): PersistentVolumeClaim => ({
      metadata: { name: `data-cs-${id}`, labels: { [LABEL_CLONESET_INSTANCE_ID]: id } },
    });
    const plan = planScale(
      input({ replicas: 3 }, [p('cs-taken', { labels: { [LABEL_CLONESET_INSTANCE_ID]: 'taken' } })], {
        pvcs: [pvc('taken'), pvc('zzzzz'), pvc('bbbbb')],
      }),
    );
    expect(plan.action.kind === 'create' && plan.action.pods.map((c) => c.id)).toEqual(['bbbbb', 'zzzzz']);
  });

  it('an orphaned PVC id whose pod is still terminating waits for that pod instead of clashing with its name', () => {
    const pvc: PersistentVolumeClaim = {
      metadata: { name: 'data-cs-ccccc', labels: { [LABEL_CLONESET_INSTANCE_ID]: 'ccccc' } },
    };
    const leaving = p('cs-ccccc', { labels: { [LABEL_CLONESET_INSTANCE_ID]: 'ccccc' } });
    const terminating = { ...leaving, metadata: { ...leaving.metadata, deletionTimestamp: NOW_TIME } };
    const plan = planScale(input({ replicas: 2 }, [p('a')], { pvcs: [pvc], inactivePods: [terminating] }));
    expect(plan.action).toEqual({ kind: 'create', pods: [] });
    const gone = planScale(input({ replicas: 2 }, [p('a')], { pvcs: [pvc] }));
    expect(gone.action).toEqual({ kind: 'create', pods: [{ id: 'ccccc', revision: 'update' }] });
  });

  it('specified delete (step 1/2): a pod listed in podsToDelete is deleted within deleteReadyLimit', () => {
    const pods = [p('a'), p('b'), p('c')];
    const plan = planScale(input({ replicas: 3, scaleStrategy: { podsToDelete: ['b'] } }, pods));
    expect(plan.action.kind === 'remove' && plan.action.step).toBe('specified');
    expect(removed(plan)).toEqual(['b:delete']);
  });

  it('specified delete (step 2/2): with the pod gone, its replacement is created', () => {
    const plan = planScale(input({ replicas: 3, scaleStrategy: { podsToDelete: ['b'] } }, [p('a'), p('c')]));
    expect(plan.action.kind === 'create' && plan.action.pods).toHaveLength(1);
  });

  it('specified-delete label: ready pods beyond maxUnavailable wait, unready ones go at once', () => {
    const pods = [
      p('a', { specifiedDelete: true }),
      p('b', { specifiedDelete: true }),
      p('c', { specifiedDelete: true, ready: false }),
      p('d', { ready: false }),
    ];
    const plan = planScale(input({ replicas: 4, updateStrategy: { maxUnavailable: 2 } }, pods));
    // maxUnavailable 2 minus the unready pod d leaves room for one ready pod (c is counted as to-delete).
    expect(removed(plan)).toEqual(['a:delete', 'c:delete']);
  });

  describe('preDelete hook', () => {
    const spec: Partial<CloneSetSpec> = {
      replicas: 2,
      lifecycle: { preDelete: { labelsHandler: { 'example.com/hold': 'true' } } },
    };
    const hooked = { 'example.com/hold': 'true' };

    it('(step 1/4) a hooked pod to delete moves to PreparingDelete instead', () => {
      const pods = [p('a', { labels: hooked }), p('b', { labels: hooked, specifiedDelete: true })];
      expect(removed(planScale(input(spec, pods)))).toEqual(['b:preparingDelete']);
    });

    it('(step 2/4) while the hook stays, nothing happens and no replacement is made', () => {
      const pods = [
        p('a', { labels: hooked }),
        p('b', { labels: hooked, specifiedDelete: true, state: LifecycleState.PreparingDelete }),
      ];
      expect(planScale(input(spec, pods)).action).toEqual({ kind: 'none' });
    });

    it('(step 3/4) once the user removes the hook, the pod is deleted', () => {
      const pods = [
        p('a', { labels: hooked }),
        p('b', { specifiedDelete: true, state: LifecycleState.PreparingDelete }),
      ];
      const plan = planScale(input(spec, pods));
      expect(plan.action.kind === 'remove' && plan.action.step).toBe('preparingDelete');
      expect(removed(plan)).toEqual(['b:delete']);
    });

    it('(step 4/4) then a new pod replaces it', () => {
      expect(planScale(input(spec, [p('a', { labels: hooked })])).action.kind).toBe('create');
    });

    it('replicas grew while a scaled-in pod was PreparingDelete: it goes back to PreparingNormal', () => {
      const pods = [p('a'), p('b', { labels: hooked, state: LifecycleState.PreparingDelete })];
      expect(planScale(input(spec, pods)).action).toEqual({ kind: 'cancelDelete', pods: [pods[1]] });
    });

    it('...but never when a hook marks pods not ready', () => {
      const pods = [p('a'), p('b', { labels: hooked, state: LifecycleState.PreparingDelete })];
      const marking = { ...spec, lifecycle: { preDelete: { ...spec.lifecycle!.preDelete, markPodNotReady: true } } };
      expect(planScale(input(marking, pods)).action.kind).not.toBe('cancelDelete');
    });
  });

  describe('scale in', () => {
    it('takes old-revision pods first, then pods in pod-sorter order', () => {
      const pods = [
        p('new-old', { readySince: 900 }),
        p('new-fresh', { readySince: 10 }),
        p('old', { revision: 'cs-old' }),
        p('new-mid', { readySince: 300 }),
      ];
      const plan = planScale(input({ replicas: 2, updateStrategy: { maxUnavailable: 4 } }, pods));
      expect(plan.action.kind === 'remove' && plan.action.step).toBe('scaleIn');
      expect(removed(plan)).toEqual(['old:delete', 'new-fresh:delete']);
    });

    it('deletes unready pods freely but ready ones only within maxUnavailable', () => {
      const pods = [p('r1'), p('r2'), p('r3'), p('u1', { ready: false })];
      const plan = planScale(input({ replicas: 1, updateStrategy: { maxUnavailable: 1 } }, pods));
      // deleteReadyLimit = 1 + (4 - 1) - 1 unavailable = 3: every pod but one may go.
      expect(removed(plan)).toHaveLength(3);
      expect(removed(plan)[0]).toBe('u1:delete');
    });

    it('honours pod-deletion-cost', () => {
      const pods = [
        p('keep', { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '100' } }),
        p('drop', { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-100' } }),
      ];
      expect(removed(planScale(input({ replicas: 1 }, pods)))).toEqual(['drop:delete']);
    });

    it('is skipped while specified or PreparingDelete pods exist', () => {
      const pods = [
        p('a'),
        p('b'),
        p('held', {
          specifiedDelete: true,
          state: LifecycleState.PreparingDelete,
          labels: { 'example.com/hold': 'true' },
        }),
      ];
      const spec: Partial<CloneSetSpec> = {
        replicas: 1,
        lifecycle: { preDelete: { labelsHandler: { 'example.com/hold': 'true' } } },
      };
      expect(planScale(input(spec, pods)).action).toEqual({ kind: 'none' });
    });
  });
});
