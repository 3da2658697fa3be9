import type { RolloutPreview } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import { renderPreview } from './rollout-preview.js';

const preview: RolloutPreview = {
  workloadId: 'w1',
  targetRevision: 3,
  previousRevision: 1,
  failureBudget: 0,
  onFailure: 'Rollback',
  offlinePolicy: 'Skip',
  at: '2026-07-01T10:00:00.000Z',
  waves: [
    {
      name: 'canary',
      members: ['a'],
      maxConcurrency: 1,
      failureBudget: 0,
      soakSeconds: 60,
      progressDeadlineSeconds: 600,
      approval: 'None',
      canarySteps: [],
      expectedStartAt: '2026-07-01T10:00:00.000Z',
      expectedEndAt: '2026-07-01T10:01:00.000Z',
    },
  ],
  clusters: [
    {
      name: 'a',
      included: true,
      wave: 'canary',
      reasons: [{ reason: 'selector', message: 'targeted' }],
      expectedStartAt: '2026-07-01T10:00:00.000Z',
      currentRevision: 1,
      manifest: {},
      diff: Array.from({ length: 10 }, (_, i) => ({ path: `spec.f${i}`, from: i, to: i + 1 })),
    },
    {
      name: 'b',
      included: false,
      wave: null,
      reasons: [{ reason: 'state', message: 'the cluster is pending, not accepted' }],
      expectedStartAt: null,
      currentRevision: null,
      manifest: null,
      diff: [],
    },
  ],
};

describe('renderPreview', () => {
  it('shows waves with expected times, every cluster with why, and the manifest changes', () => {
    const text = renderPreview(preview);
    expect(text).toContain('preview (nothing started): workload w1, revision 1 -> 3');
    expect(text).toMatch(/canary\s+a\s+1\s+60s\s+None\s+2026-07-01T10:00:00.000Z\s+2026-07-01T10:01:00.000Z/);
    expect(text).toMatch(/b\s+no\s+-\s+-\s+-\s+state: the cluster is pending, not accepted/);
    expect(text).toContain('  a: 10 change(s)\n    spec.f0: 0 -> 1\n');
    expect(text).toContain('… 2 more (-o yaml shows all)');
  });
});
