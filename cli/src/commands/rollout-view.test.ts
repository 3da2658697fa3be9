import type { Rollout, RolloutClusterStatus } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import { analysisText, renderRollout, waitText } from './rollout-view.js';

const cluster = (name: string, over: Partial<RolloutClusterStatus> = {}): RolloutClusterStatus => ({
  name,
  wave: 'canary',
  phase: 'Pending',
  step: 0,
  startedAt: null,
  deadlineAt: null,
  healthySince: null,
  finishedAt: null,
  message: '',
  waitingFor: null,
  waitingUntil: null,
  desiredRevision: 1,
  runningRevision: 1,
  ...over,
});

const rollout: Rollout = {
  id: 'r1',
  workloadId: 'w1',
  targetRevision: 2,
  previousRevision: 1,
  rollbackOf: null,
  strategy: {},
  phase: 'Progressing',
  currentWave: 'canary',
  message: '',
  failureBudget: 0,
  onFailure: 'Pause',
  offlinePolicy: 'Skip',
  waves: [],
  clusters: [
    cluster('c1', { phase: 'Soaking', waitingFor: 'soak', desiredRevision: 2, runningRevision: 2 }),
    cluster('c2', { waitingFor: 'window', waitingUntil: '2026-01-03T02:00:00.000Z' }),
  ],
  waits: { soak: 1, window: 1 },
  revisions: [
    { revision: 1, clusters: 1 },
    { revision: 2, clusters: 1 },
  ],
  skew: true,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  createdBy: 'admin',
};

describe('rollout view', () => {
  it('shows running revisions with the skew flag, waits by reason and each cluster’s wait', () => {
    const text = renderRollout(rollout, new Date('2026-01-01T00:01:00.000Z'));
    expect(text).toContain('running revisions 1: 1, 2: 1 (SKEW)');
    expect(text).toContain('waiting: 1 for soak, 1 for window');
    expect(text).toMatch(/c2\s+canary\s+Pending\s+0\s+1\s+window until 2026-01-03T02:00:00.000Z/);
    expect(waitText(cluster('c3'))).toBe('-');
  });

  it('leaves the lines out when nothing runs or waits', () => {
    const text = renderRollout({ ...rollout, revisions: [], waits: {}, skew: false }, new Date());
    expect(text).not.toContain('running revisions');
    expect(text).not.toContain('waiting:');
  });

  it('shows each cluster’s analysis: verdict, measurements of count, latest values', () => {
    expect(analysisText(cluster('c1'))).toBe('-');
    const analysis = {
      attempt: 1,
      verdict: 'Running' as const,
      measurements: 1,
      count: 3,
      message: '1/3 measurements passed',
      results: [
        { name: 'errors', value: 0.01, outcome: 'Passed', message: 'result < 0.05 (0.01)' },
        { name: 'latency', value: null, outcome: 'Inconclusive', message: 'no data' },
      ],
    };
    expect(analysisText(cluster('c1', { analysis }))).toBe('Running 1/3 errors=0.01 latency=?');
    expect(renderRollout({ ...rollout, clusters: [cluster('c1', { analysis })] }, new Date())).toContain(
      'Running 1/3 errors=0.01 latency=?',
    );
  });
});
