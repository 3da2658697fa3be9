import { jobTemplateHash } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import { planJobApply } from './job-rerun.js';
import type { KubeObject } from './types.js';

const template = (image: string) => ({ spec: { restartPolicy: 'Never', containers: [{ name: 'main', image }] } });
const H1 = jobTemplateHash(template('task:v1'));
const H2 = jobTemplateHash(template('task:v2'));

/** The hub's manifest of revision `revision` running `image`. */
const manifest = (image: string, revision: number): KubeObject => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'BroadcastJob',
  metadata: { name: 'job', namespace: 'ns', annotations: { 'flotilla.io/revision': String(revision) } },
  spec: { template: template(image), parallelism: 2 },
});

/** The job in the cluster, with the annotations the agent stamped. */
const inCluster = (annotations: Record<string, string>, deleting = false): KubeObject => ({
  metadata: {
    name: 'job',
    uid: 'u1',
    annotations,
    ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
  },
});
const ranAt = (hash: string, revision: number): KubeObject =>
  inCluster({
    'flotilla.io/revision': String(revision),
    'flotilla.io/template-hash': hash,
    'flotilla.io/run-template-hash': hash,
  });

const hashes = (m: KubeObject) => ({
  wanted: m.metadata?.annotations?.['flotilla.io/template-hash'],
  ran: m.metadata?.annotations?.['flotilla.io/run-template-hash'],
});

describe('planJobApply', () => {
  it('creates a new job stamped with its template hash as the run hash', () => {
    const plan = planJobApply('BroadcastJob', manifest('task:v1', 1), undefined);
    expect(plan.replace).toBe(false);
    expect(hashes(plan.manifest)).toEqual({ wanted: H1, ran: H1 });
  });

  it('replaces a job whose template changed (a new revision), the new one running the new template', () => {
    const plan = planJobApply('BroadcastJob', manifest('task:v2', 2), ranAt(H1, 1));
    expect(plan).toMatchObject({ replace: true, reason: 'template-changed' });
    expect(hashes(plan.manifest)).toEqual({ wanted: H2, ran: H2 });
  });

  it('patches a job when only other fields changed, keeping the hash of the template it ran', () => {
    const m = manifest('task:v1', 3);
    (m.spec as Record<string, unknown>).parallelism = 5;
    const plan = planJobApply('BroadcastJob', m, ranAt(H1, 2));
    expect(plan.replace).toBe(false);
    expect(hashes(plan.manifest)).toEqual({ wanted: H1, ran: H1 });
  });

  it('patches a redelivery of the same revision', () => {
    expect(planJobApply('BroadcastJob', manifest('task:v2', 2), ranAt(H2, 2)).replace).toBe(false);
  });

  it('finishes a replacement that did not finish: the old job is still being deleted', () => {
    const deleting = inCluster({ 'flotilla.io/template-hash': H2, 'flotilla.io/run-template-hash': H2 }, true);
    expect(planJobApply('BroadcastJob', manifest('task:v2', 2), deleting)).toMatchObject({
      replace: true,
      reason: 'being-deleted',
    });
  });

  it('judges a job created before hashes were stamped by its revision', () => {
    const legacy = inCluster({ 'flotilla.io/revision': '1' });
    expect(planJobApply('BroadcastJob', manifest('task:v1', 1), legacy).replace).toBe(false);
    expect(planJobApply('BroadcastJob', manifest('task:v2', 2), legacy)).toMatchObject({
      replace: true,
      reason: 'revision-changed',
    });
  });

  it('leaves other kinds to plain server-side apply, unstamped', () => {
    const m: KubeObject = { kind: 'CloneSet', metadata: { name: 'web' }, spec: { template: template('web:2') } };
    const plan = planJobApply('CloneSet', m, ranAt(H1, 1));
    expect(plan).toEqual({ replace: false, manifest: m });
  });
});
