/**
 * CloneSet `progressDeadlineSeconds` (OpenKruise v1.9) against a real apiserver with kwok nodes:
 * the Progressing condition while at rest and while rolling, ProgressDeadlineExceeded when the new
 * pods cannot be scheduled, and its clearing once the CloneSet is available again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CloneSet } from '@flotilla/api';
import {
  cloneSet,
  createCloneSet,
  env,
  namespace,
  patchCloneSet,
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

type Status = NonNullable<CloneSet['status']>;
const progressing = (s: Status) => s.conditions?.find((c) => c.type === 'Progressing');

describe('CloneSet progressDeadlineSeconds', () => {
  it('reaches ProgressDeadlineExceeded when an update cannot progress, and clears it once available', async () => {
    const ns = await namespace(e, 'cs-progress');
    running.push(await startController(e, ns));
    await createCloneSet(e, ns, cloneSet('web', { replicas: 2, progressDeadlineSeconds: 5 }));
    await settled(e, ns, 'web', 2);
    const rest = await statusReaches(e, ns, 'web', 'Progressing True CloneSetAvailable', (s) => {
      const c = progressing(s);
      return c?.status === 'True' && c.reason === 'CloneSetAvailable';
    });
    expect(progressing(rest.status!)).toMatchObject({ message: 'CloneSet is available' });
    expect(progressing(rest.status!)?.lastUpdateTime).toBeDefined();

    // New pods that no node accepts: the rollout cannot progress.
    await patchCloneSet(e, ns, 'web', {
      spec: { template: { spec: { nodeSelector: { 'flotilla.test/nowhere': 'true' } } } },
    });
    const exceeded = await statusReaches(e, ns, 'web', 'Progressing False ProgressDeadlineExceeded', (s) => {
      const c = progressing(s);
      return c?.status === 'False' && c.reason === 'ProgressDeadlineExceeded';
    });
    expect(progressing(exceeded.status!)?.message).toBe(
      `CloneSet revision ${exceeded.status!.updateRevision} has timed out progressing`,
    );

    // Back to schedulable pods: available again, and the condition says so.
    await patchCloneSet(e, ns, 'web', { spec: { template: { spec: { nodeSelector: null } } } });
    await settled(e, ns, 'web', 2);
    await statusReaches(e, ns, 'web', 'Progressing True CloneSetAvailable again', (s) => {
      const c = progressing(s);
      return c?.status === 'True' && c.reason === 'CloneSetAvailable';
    });
  });

  it('drops the condition when the deadline is removed', async () => {
    const ns = await namespace(e, 'cs-progress');
    running.push(await startController(e, ns));
    await createCloneSet(e, ns, cloneSet('web', { replicas: 1, progressDeadlineSeconds: 600 }));
    await statusReaches(e, ns, 'web', 'Progressing set', (s) => progressing(s) !== undefined);
    await patchCloneSet(e, ns, 'web', { spec: { progressDeadlineSeconds: null } });
    await statusReaches(e, ns, 'web', 'Progressing gone', (s) => progressing(s) === undefined);
  });
});
