/**
 * Failures are reported, not swallowed or crashed on: an invalid CloneSet that slipped past
 * validation (no webhook here), pod creation refused by the apiserver, and an InPlaceOnly update
 * that cannot be done in place each get a FailedScale/FailedUpdate condition and an event, while
 * other CloneSets keep reconciling; the condition goes away once the cause is fixed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/kube.js';
import {
  cloneSet,
  createCloneSet,
  env,
  events,
  livePods,
  namespace,
  patchCloneSet,
  settled,
  startController,
  statusReaches,
  type RunningController,
} from './harness.js';
import { resourcePath, type ResourceRef } from '../../../agent/src/runtime/resource.js';

const e = env();
const running: RunningController[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

const QUOTAS: ResourceRef = {
  group: '',
  version: 'v1',
  plural: 'resourcequotas',
  kind: 'ResourceQuota',
  namespaced: true,
};

function failure(type: string) {
  return (s: { conditions?: { type: string; status: string; message?: string }[] }) =>
    s.conditions?.find((c) => c.type === type && c.status === 'True')?.message;
}

describe('CloneSet failures', () => {
  it('an invalid CloneSet gets FailedScale and an event naming the field; others keep reconciling; fixing it recovers', async () => {
    const ns = await namespace(e, 'cs-invalid');
    running.push(await startController(e, ns));
    const bad = cloneSet('bad', { replicas: 2 });
    bad.spec.selector = { matchLabels: { app: 'something-else' } };
    await createCloneSet(e, ns, bad);
    await createCloneSet(e, ns, cloneSet('good', { replicas: 2 }));

    const cs = await statusReaches(e, ns, 'bad', 'FailedScale', (s) => failure('FailedScale')(s) !== undefined);
    expect(failure('FailedScale')(cs.status!)).toMatch(
      /^invalid CloneSet, not scaling or updating it: spec\.template\.metadata\.labels: .*`selector` does not match template `labels`/,
    );
    const ev = await eventually('FailedValidation event', async () =>
      (await events(e, ns, 'bad')).find((x) => x.reason === 'FailedValidation'),
    );
    expect(ev.type).toBe('Warning');
    expect(ev.message).toContain('spec.template.metadata.labels');
    expect(await livePods(e, ns, 'something-else')).toHaveLength(0);
    await settled(e, ns, 'good', 2);

    await patchCloneSet(e, ns, 'bad', { spec: { selector: { matchLabels: { app: 'bad' } } } });
    const fixed = await settled(e, ns, 'bad', 2);
    expect(fixed.status?.conditions ?? []).toEqual([]);
  });

  it('pod creation refused by a ResourceQuota gives FailedScale with the apiserver message, cleared when the quota grows', async () => {
    const ns = await namespace(e, 'cs-quota');
    await e.rest.request({
      method: 'POST',
      path: resourcePath(QUOTAS, ns),
      body: { metadata: { name: 'pods' }, spec: { hard: { pods: '1' } } },
    });
    await eventually('quota status computed', async () => {
      const q = await e.rest.request<{ status?: { hard?: object } }>({
        method: 'GET',
        path: resourcePath(QUOTAS, ns, 'pods'),
      });
      return q.status?.hard !== undefined;
    });
    running.push(await startController(e, ns));
    await createCloneSet(e, ns, cloneSet('web', { replicas: 2 }));
    const cs = await statusReaches(e, ns, 'web', 'FailedScale', (s) => failure('FailedScale')(s) !== undefined);
    expect(failure('FailedScale')(cs.status!)).toMatch(/failed to create pod web-\w{5}: .*exceeded quota/);
    expect((await events(e, ns, 'web')).some((x) => x.reason === 'FailedCreate' && x.type === 'Warning')).toBe(true);
    expect(await livePods(e, ns, 'web')).toHaveLength(1);

    await e.rest.request({
      method: 'PATCH',
      path: resourcePath(QUOTAS, ns, 'pods'),
      contentType: 'application/merge-patch+json',
      body: { spec: { hard: { pods: '5' } } },
    });
    const fixed = await settled(e, ns, 'web', 2, 90_000);
    expect(fixed.status?.conditions ?? []).toEqual([]);
  });

  it("InPlaceOnly with a change that cannot be done in place gives FailedUpdate with OpenKruise's message", async () => {
    const ns = await namespace(e, 'cs-inplaceonly');
    running.push(await startController(e, ns));
    await createCloneSet(e, ns, cloneSet('web', { replicas: 1, updateStrategy: { type: 'InPlaceOnly' } }));
    await settled(e, ns, 'web', 1);
    await patchCloneSet(e, ns, 'web', {
      spec: {
        template: {
          spec: { containers: [{ name: 'main', image: 'registry.local/app:v1', env: [{ name: 'A', value: '1' }] }] },
        },
      },
    });
    const cs = await statusReaches(e, ns, 'web', 'FailedUpdate', (s) => failure('FailedUpdate')(s) !== undefined);
    expect(failure('FailedUpdate')(cs.status!)).toMatch(
      /^find Pod web-\w{5} update strategy is InPlaceOnly but can not update in-place$/,
    );
    expect((await events(e, ns, 'web')).some((x) => x.reason === 'FailedUpdate')).toBe(true);
    // Nothing was recreated.
    expect(cs.status).toMatchObject({ replicas: 1, updatedReplicas: 0 });
  });
});
