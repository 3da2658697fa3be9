import type { ImageTagSpec, NodeImage, NodeImageStatus } from '@flotilla/api';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../runtime/kube-object.js';
import { FakeClock, flush } from '../runtime/testing/fake-clock.js';
import type { PullSecret } from './auth.js';
import { FakeImageService } from './cri/fake-image-service.js';
import { Puller, REASON_PULL_FAILED, REASON_PULL_SUCCEEDED } from './puller.js';
import { nodeImageStatus, statusPatch } from './status.js';
import { createStatusWriter } from './status-writer.js';

const REG = '127.0.0.1:5000';
const job = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ImagePullJob', namespace: 'ns', name: 'j', uid: 'u1' };

function nodeImage(images: Record<string, ImageTagSpec[]>, status?: NodeImageStatus, secrets?: string[]): NodeImage {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'NodeImage',
    metadata: { name: 'node-1' },
    spec: {
      images: Object.fromEntries(
        Object.entries(images).map(([name, tags]) => [
          name,
          { tags, ...(secrets ? { pullSecrets: secrets.map((n) => ({ namespace: 'cfg', name: n })) } : {}) },
        ]),
      ),
    },
    ...(status ? { status } : {}),
  };
}

const tag = (t: string, version = 0, extra: Partial<ImageTagSpec> = {}): ImageTagSpec => ({
  tag: t,
  version,
  ownerReferences: [job],
  ...extra,
});

function setup(maxPulls?: number, secrets: Record<string, PullSecret> = {}) {
  const images = new FakeImageService();
  const events: { name?: string; kind?: string; type: string; reason: string; message: string }[] = [];
  let changes = 0;
  const puller = new Puller({
    images,
    secrets: {
      read: (refs) =>
        Promise.resolve({
          secrets: refs.flatMap((r) => (secrets[r.name ?? ''] ? [secrets[r.name ?? '']!] : [])),
          problems: refs
            .filter((r) => !secrets[r.name ?? ''])
            .map((r) => ({ secret: `cfg/${r.name}`, reason: 'not found' })),
        }),
    },
    events: {
      event: (obj: KubeObject, type, reason, message) =>
        events.push({ name: obj.metadata?.name, kind: obj.kind, type, reason, message }),
    },
    clock: new FakeClock(),
    log: pino({ level: 'silent' }),
    maxPulls,
    onChange: () => changes++,
  });
  return { images, puller, events, changes: () => changes };
}

describe('Puller', () => {
  it('pulls every tag of the spec and reports them sorted, with events on the job and the NodeImage', async () => {
    const { images, puller, events } = setup();
    images.publish(`${REG}/app:v2`, 'sha256:b');
    images.publish(`${REG}/app:v1`, 'sha256:a');
    const ni = nodeImage({ [`${REG}/app`]: [tag('v2'), tag('v1')] });
    puller.sync(ni);
    await flush();
    expect(puller.statusOf(`${REG}/app`)?.map((s) => [s.tag, s.phase])).toEqual([
      ['v1', 'Succeeded'],
      ['v2', 'Succeeded'],
    ]);
    expect(events.filter((e) => e.reason === REASON_PULL_SUCCEEDED).map((e) => `${e.kind}/${e.name}`)).toEqual([
      'ImagePullJob/j',
      'NodeImage/node-1',
      'ImagePullJob/j',
      'NodeImage/node-1',
    ]);
    expect(nodeImageStatus(ni.spec, (n) => puller.statusOf(n))).toMatchObject({
      desired: 2,
      succeeded: 2,
      failed: 0,
      pulling: 0,
    });
  });

  it('does not pull a version again that the status already finished, nor one whose result is pending', async () => {
    const { images, puller } = setup();
    images.publish(`${REG}/app:v1`, 'sha256:a');
    const done = { tag: 'v1', phase: 'Succeeded', version: 4, completionTime: '2026-01-01T00:00:00Z' };
    puller.sync(
      nodeImage(
        { [`${REG}/app`]: [tag('v1', 4)] },
        { desired: 1, imageStatuses: { [`${REG}/app`]: { tags: [done] } } },
      ),
    );
    await flush();
    expect(images.pulls).toHaveLength(0);
    expect(puller.statusOf(`${REG}/app`)).toEqual([done]);

    puller.sync(nodeImage({ [`${REG}/app`]: [tag('v1', 5, { imagePullPolicy: 'Always' })] }));
    await flush();
    // The status written to the apiserver is not back yet: the same sync must not start another pull.
    puller.sync(nodeImage({ [`${REG}/app`]: [tag('v1', 5, { imagePullPolicy: 'Always' })] }));
    await flush();
    expect(images.pulls).toHaveLength(1);
    expect(puller.statusOf(`${REG}/app`)?.[0]).toMatchObject({ version: 5, phase: 'Succeeded' });
  });

  it('stops workers of tags that left the spec and forgets their status', async () => {
    const { images, puller } = setup();
    images.pullDelayMs = 30;
    images.publish(`${REG}/app:v1`, 'sha256:a');
    puller.sync(nodeImage({ [`${REG}/app`]: [tag('v1')] }));
    await flush();
    expect(puller.active()).toBe(1);
    puller.sync(nodeImage({}));
    await puller.stop();
    expect(puller.statusOf(`${REG}/app`)).toBeUndefined();
  });

  it('keeps other images pulling when one entry is nonsense or its secret is missing', async () => {
    const { images, puller, events } = setup();
    images.publish(`${REG}/good:v1`, 'sha256:g');
    images.requireAuth(REG.replace('5000', '5001'), 'u', 'p');
    puller.sync(
      nodeImage(
        {
          'Not/A/Valid Name': [tag('x', 0, { pullPolicy: { backoffLimit: 0 } })],
          [`${REG.replace('5000', '5001')}/private`]: [tag('v1', 0, { pullPolicy: { backoffLimit: 0 } })],
          [`${REG}/good`]: [tag('v1')],
        },
        undefined,
        ['missing'],
      ),
    );
    await flush();
    const phases = (n: string) => puller.statusOf(n)?.map((s) => s.phase);
    expect(phases(`${REG}/good`)).toEqual(['Succeeded']);
    expect(phases('Not/A/Valid Name')).toEqual(['Failed']);
    expect(puller.statusOf(`${REG.replace('5000', '5001')}/private`)?.[0]?.message).toContain(
      '401 Unauthorized; pull secret cfg/missing: not found',
    );
    expect(events.filter((e) => e.reason === REASON_PULL_FAILED && e.kind === 'ImagePullJob')).toHaveLength(2);
  });
});

describe('daemon status', () => {
  it('counts every tag of the spec (Waiting ones too) and removes vanished images with null in the patch', () => {
    const spec = nodeImage({ a: [tag('1'), tag('2')], b: [tag('1')] }).spec;
    const waiting = { tag: '1', phase: 'Waiting', version: 0 };
    const status = nodeImageStatus(spec, (name) =>
      name === 'a'
        ? [
            { tag: '1', phase: 'Succeeded', version: 0 },
            { tag: '2', phase: 'Pulling', version: 0 },
            { tag: 'gone', phase: 'Failed', version: 0 },
          ]
        : [waiting],
    );
    expect(status).toEqual({
      desired: 3,
      succeeded: 1,
      failed: 0,
      pulling: 1,
      waiting: 1,
      imageStatuses: {
        a: {
          tags: [
            { tag: '1', phase: 'Succeeded', version: 0 },
            { tag: '2', phase: 'Pulling', version: 0 },
          ],
        },
        b: { tags: [waiting] },
      },
    });
    const old = { desired: 1, imageStatuses: { c: { tags: [{ tag: '1', phase: 'Succeeded' }] } } };
    expect(statusPatch(old, status)).toEqual({
      status: {
        desired: 3,
        succeeded: 1,
        failed: 0,
        pulling: 1,
        waiting: 1,
        imageStatuses: { a: status.imageStatuses!.a, b: status.imageStatuses!.b, c: null },
      },
    });
  });

  it('with --max-workers-for-pull-image 1, a second tag reports Waiting until the first is pulled', async () => {
    const { images, puller } = setup(1);
    images.pullDelayMs = 30;
    images.publish(`${REG}/app:v1`, 'sha256:a');
    images.publish(`${REG}/app:v2`, 'sha256:b');
    const ni = nodeImage({ [`${REG}/app`]: [tag('v1'), tag('v2')] });
    puller.sync(ni);
    await flush();
    expect(puller.statusOf(`${REG}/app`)?.map((s) => [s.tag, s.phase])).toEqual([
      ['v1', 'Pulling'],
      ['v2', 'Waiting'],
    ]);
    expect(nodeImageStatus(ni.spec, (n) => puller.statusOf(n))).toMatchObject({ pulling: 1, waiting: 1 });
    expect(puller.waiting()).toBe(1);
    await new Promise((r) => setTimeout(r, 120));
    await flush();
    expect(puller.statusOf(`${REG}/app`)?.map((s) => [s.tag, s.phase])).toEqual([
      ['v1', 'Succeeded'],
      ['v2', 'Succeeded'],
    ]);
    expect(images.pulls).toHaveLength(2);
    expect(puller.waiting()).toBe(0);
  });

  it('a Waiting tag that leaves the spec never pulls', async () => {
    const { images, puller } = setup(1);
    images.pullDelayMs = 30;
    images.publish(`${REG}/app:v1`, 'sha256:a');
    images.publish(`${REG}/app:v2`, 'sha256:b');
    puller.sync(nodeImage({ [`${REG}/app`]: [tag('v1'), tag('v2')] }));
    await flush();
    puller.sync(nodeImage({ [`${REG}/app`]: [tag('v1')] }));
    await new Promise((r) => setTimeout(r, 120));
    await flush();
    expect(puller.statusOf(`${REG}/app`)?.map((s) => [s.tag, s.phase])).toEqual([['v1', 'Succeeded']]);
    expect(images.pulls).toHaveLength(1);
  });

  it('writes only changes, within the rate limit', async () => {
    const clock = new FakeClock();
    const sent: unknown[] = [];
    const writer = createStatusWriter((_n, p) => Promise.resolve(sent.push(p)), clock, { burst: 2, qps: 1 });
    const ni = nodeImage({});
    expect(await writer.write({ ...ni, status: { desired: 0 } }, { desired: 0, pulling: 0 })).toBe(0);
    expect(sent).toHaveLength(0);
    expect(await writer.write(ni, { desired: 1 })).toBe(0);
    expect(await writer.write(ni, { desired: 2 })).toBe(0);
    expect(await writer.write(ni, { desired: 3 })).toBe(1000);
    clock.advance(1000);
    expect(await writer.write(ni, { desired: 3 })).toBe(0);
    expect(sent).toHaveLength(3);
  });
});
