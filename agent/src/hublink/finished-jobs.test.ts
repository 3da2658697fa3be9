import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { DesiredMessage, StatusMessage } from '@flotilla/api';
import { decideDesired } from './desired-decision.js';
import { createDriftGuard, createSerial, driftOf } from './drift.js';
import { createFinishedJobs, memoryRunStore } from './finished-job-store.js';
import {
  decodeRuns,
  encodeRuns,
  finishedReport,
  finishedRunOf,
  manifestTemplateHash,
  ranTemplate,
  runFor,
  runKey,
  type FinishedRun,
} from './finished-jobs.js';
import { createHubLinkMetrics } from './metrics.js';
import { statusReport } from './object-status.js';
import type { KubeApplier, KubeObject, ObjectRef } from './types.js';

const ref: ObjectRef = { kind: 'BroadcastJob', namespace: 'ops', name: 'task' };
const NOW = new Date('2026-01-01T00:00:00Z');

const spec = (image: string, ttl: number | null): Record<string, unknown> => ({
  template: { spec: { restartPolicy: 'Never', containers: [{ name: 'm', image }] } },
  completionPolicy: { type: 'Always', ...(ttl === null ? {} : { ttlSecondsAfterFinished: ttl }) },
});

const desired = (generation: number, image: string, ttl: number | null = 30): DesiredMessage => ({
  v: 1,
  cluster: 'c1',
  kind: 'BroadcastJob',
  namespace: 'ops',
  name: 'task',
  workloadId: 'w1',
  revision: generation,
  generation,
  deleted: false,
  manifest: {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'BroadcastJob',
    metadata: { name: 'task', namespace: 'ops' },
    spec: spec(image, ttl),
  },
  publishedAt: '',
});

/** The job as the apiserver has it after the agent applied `msg`, with the controller's status. */
function job(msg: DesiredMessage, status: Record<string, unknown>, extra: Partial<KubeObject['metadata']> = {}) {
  const decision = decideDesired(msg, undefined);
  if (decision.action !== 'apply') throw new Error(`expected apply, got ${decision.action}`);
  const manifest = decision.manifest;
  return {
    ...manifest,
    metadata: { ...manifest.metadata, uid: 'uid-1', generation: 1, ...extra },
    status,
  } as KubeObject;
}

const completed = { phase: 'completed', desired: 2, succeeded: 2, failed: 0, active: 0 };
const failed = { phase: 'failed', desired: 2, succeeded: 1, failed: 1, active: 0 };

function runOf(obj: KubeObject): FinishedRun | undefined {
  return finishedRunOf(ref, obj, statusReport('c1', ref, obj, NOW));
}

describe('finishedRunOf', () => {
  it('remembers a TTL job that completed or failed, with its template and report', () => {
    const done = runOf(job(desired(1, 'v1'), completed));
    expect(done).toMatchObject({
      uid: 'uid-1',
      templateHash: manifestTemplateHash(desired(1, 'v1').manifest),
      report: { health: 'Healthy', generation: 1, counts: { replicas: 2, readyReplicas: 2 } },
    });
    expect(runOf(job(desired(1, 'v1'), failed))?.report.health).toBe('Degraded');
  });

  it.each([
    ['without a TTL', job(desired(1, 'v1', null), completed)],
    ['still running', job(desired(1, 'v1'), { phase: 'running', desired: 2, active: 2 })],
    ['being deleted', job(desired(1, 'v1'), completed, { deletionTimestamp: '2026-01-01T00:00:00Z' })],
    ['not the hub’s', job(desired(1, 'v1'), completed, { labels: {} })],
  ])('remembers nothing of a job %s', (_what, obj) => {
    expect(runOf(obj)).toBeUndefined();
  });

  it('remembers nothing of a job whose template was patched in without a run', () => {
    const obj = job(desired(1, 'v1'), completed);
    obj.metadata!.annotations = { ...obj.metadata!.annotations, 'flotilla.io/run-template-hash': 'older' };
    expect(runOf(obj)).toBeUndefined();
  });

  it('remembers nothing of another kind', () => {
    const obj = job(desired(1, 'v1'), completed);
    const cs = { ...ref, kind: 'CloneSet' as const };
    expect(finishedRunOf(cs, obj, statusReport('c1', cs, obj, NOW))).toBeUndefined();
  });
});

describe('a finished run that removed itself', () => {
  const run = runOf(job(desired(1, 'v1'), completed))!;

  it('is not created again for the template it ran, and is for a new template or a tombstone', () => {
    expect(decideDesired(desired(2, 'v1'), undefined, run)).toEqual({ action: 'skip', reason: 'finished' });
    expect(decideDesired(desired(3, 'v2'), undefined, run).action).toBe('apply');
    expect(decideDesired({ ...desired(3, 'v1'), deleted: true }, undefined, run)).toEqual({
      action: 'skip',
      reason: 'already-gone',
    });
    // A job of that name standing in the cluster is planned as before.
    expect(decideDesired(desired(2, 'v1'), job(desired(1, 'v1'), completed), run).action).toBe('apply');
  });

  it('is no drift once gone, while a job of another template gone is', () => {
    const applied = job(desired(1, 'v1'), {});
    const entry = { ref, manifest: applied, generation: 1, kubeGeneration: 1 };
    expect(driftOf(entry, undefined, run)).toBeUndefined();
    expect(driftOf(entry, undefined)).toBe('gone');
    const v2 = job(desired(2, 'v2'), {});
    expect(driftOf({ ...entry, manifest: v2 }, undefined, run)).toBe('gone');
  });

  it('is reported as it finished, for the latest message with its template', () => {
    const answered = runFor(run, { workloadId: 'w1', revision: 4, generation: 4 });
    const report = finishedReport(answered, NOW);
    expect(report).toMatchObject({
      kind: 'BroadcastJob',
      name: 'task',
      health: 'Healthy',
      generation: 4,
      revision: 4,
      counts: run.report.counts,
      reportedAt: NOW.toISOString(),
    });
    expect(report.message).toContain('removed after ttlSecondsAfterFinished');
    expect(ranTemplate(answered, manifestTemplateHash(desired(4, 'v1').manifest))).toBe(true);
  });

  it('is kept in ConfigMap data, dropping entries that are not runs of their key', () => {
    const runs = new Map([[runKey(ref), run]]);
    const data = encodeRuns(runs);
    expect(Object.keys(data)).toEqual(['ops.task']);
    expect(decodeRuns(data)).toEqual(runs);
    expect(decodeRuns({ ...data, 'ops.other': data['ops.task']!, 'ops.bad': '{' })).toEqual(runs);
    expect(decodeRuns(undefined).size).toBe(0);
  });
});

/** An apiserver in memory, enough for the drift guard. */
function memoryKube(): KubeApplier & { objects: Map<string, KubeObject>; applies: number } {
  const objects = new Map<string, KubeObject>();
  const kube = {
    objects,
    applies: 0,
    apply(_ref: ObjectRef, manifest: KubeObject) {
      kube.applies++;
      const obj = { ...manifest, metadata: { ...manifest.metadata, generation: 1, uid: `uid-${kube.applies}` } };
      objects.set(runKey(ref), obj);
      return Promise.resolve(structuredClone(obj));
    },
    get: () => Promise.resolve(structuredClone(objects.get(runKey(ref)))),
    delete: () => Promise.resolve(void objects.delete(runKey(ref))),
    listManaged: () => Promise.resolve([...objects.values()].map((o) => structuredClone(o))),
    serverVersion: () => Promise.resolve('v1.36.0'),
  };
  return kube;
}

describe('the finished jobs memory with drift repair', () => {
  it('leaves a TTL job gone after it finished, also after a restart, and reports it finished', async () => {
    const store = memoryRunStore();
    const logger = pino({ level: 'silent' });
    const kube = memoryKube();
    const finished = createFinishedJobs({ cluster: 'c1', store, logger });
    await finished.load();
    const guard = createDriftGuard({
      kube,
      serial: createSerial(),
      logger,
      metrics: createHubLinkMetrics(new Registry()),
      finished: (r) => finished.get(r),
    });
    const msg = desired(1, 'v1');
    const decision = decideDesired(msg, undefined);
    if (decision.action !== 'apply') throw new Error('expected apply');
    await guard.apply(ref, decision.manifest, 1);
    // The controller finishes the job; the status pass sees it, then its TTL removes it.
    const obj = kube.objects.get('ops.task')!;
    kube.objects.set('ops.task', { ...obj, status: completed });
    await finished.observe(await kube.listManaged('BroadcastJob'), NOW);
    kube.objects.clear();
    await guard.check('BroadcastJob', await kube.listManaged('BroadcastJob'));
    expect(kube.applies).toBe(1);
    expect(finished.reports(NOW)).toEqual([
      expect.objectContaining<Partial<StatusMessage>>({ name: 'task', health: 'Healthy', generation: 1 }),
    ]);

    // A restarted agent reads the run back; the hub's republished message is not applied.
    const again = createFinishedJobs({ cluster: 'c1', store, logger });
    await again.load();
    expect(decideDesired(desired(1, 'v1'), undefined, again.get(ref))).toEqual({ action: 'skip', reason: 'finished' });
    await again.answered(ref, desired(2, 'v1'));
    expect(again.reports(NOW)[0]?.generation).toBe(2);
    // A tombstone or a new template ends it.
    await again.forget(ref);
    expect(again.get(ref)).toBeUndefined();
    expect(store.saved.size).toBe(0);
  });
});
