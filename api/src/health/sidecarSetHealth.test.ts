import { describe, expect, it } from 'vitest';
import { type SidecarSetHealthInput, sidecarSetHealth } from './sidecarSetHealth.js';
import type { HealthState } from './verdict.js';

type Strategy = NonNullable<NonNullable<SidecarSetHealthInput['spec']>['updateStrategy']>;
type Status = NonNullable<SidecarSetHealthInput['status']>;

// A SidecarSet matching 4 pods, all upgraded to sc-rev2 and ready, at generation 2.
function sidecarSet(strategy: Strategy = {}, status: Partial<Status> = {}): SidecarSetHealthInput {
  return {
    metadata: { generation: 2 },
    spec: { updateStrategy: strategy },
    status: {
      observedGeneration: 2,
      matchedPods: 4,
      updatedPods: 4,
      readyPods: 4,
      updatedReadyPods: 4,
      latestRevision: 'sc-rev2',
      ...status,
    },
  };
}

interface Case {
  name: string;
  input: unknown;
  target?: string;
  state: HealthState;
  reason: string;
}

const cases: Case[] = [
  { name: 'all matched pods updated and ready', input: sidecarSet(), state: 'Healthy', reason: 'Updated' },
  {
    name: 'target matches latestRevision',
    input: sidecarSet(),
    target: 'sc-rev2',
    state: 'Healthy',
    reason: 'Updated',
  },
  {
    name: 'target differs from latestRevision',
    input: sidecarSet(),
    target: 'sc-rev3',
    state: 'Progressing',
    reason: 'LatestRevisionMismatch',
  },
  {
    name: 'stale status',
    input: sidecarSet({}, { observedGeneration: 1 }),
    state: 'Stale',
    reason: 'StatusNotObserved',
  },
  {
    name: 'pods still being upgraded',
    input: sidecarSet({}, { updatedPods: 2, updatedReadyPods: 2 }),
    state: 'Progressing',
    reason: 'WaitingForUpdatedPods',
  },
  {
    name: 'paused mid-upgrade',
    input: sidecarSet({ paused: true }, { updatedPods: 2, updatedReadyPods: 2 }),
    state: 'Progressing',
    reason: 'Paused',
  },
  {
    name: 'partition 2 keeps two pods on the old sidecars',
    input: sidecarSet({ partition: 2 }, { updatedPods: 2, updatedReadyPods: 2 }),
    state: 'Healthy',
    reason: 'Updated',
  },
  {
    name: 'percentage partition 50% of 4 keeps 2',
    input: sidecarSet({ partition: '50%' }, { updatedPods: 2, updatedReadyPods: 2 }),
    state: 'Healthy',
    reason: 'Updated',
  },
  {
    name: 'updated pods not ready',
    input: sidecarSet({}, { updatedReadyPods: 3, readyPods: 3 }),
    state: 'Progressing',
    reason: 'WaitingForUpdatedPodsReady',
  },
  {
    name: 'an old pod not ready',
    input: sidecarSet({ partition: 1 }, { updatedPods: 3, updatedReadyPods: 3, readyPods: 3 }),
    state: 'Progressing',
    reason: 'WaitingForReadyPods',
  },
  {
    name: 'older controller without updatedReadyPods',
    input: sidecarSet({}, { updatedReadyPods: undefined, readyPods: 3 }),
    state: 'Progressing',
    reason: 'WaitingForReadyPods',
  },
  {
    name: 'NotUpdate: only readiness counts',
    input: sidecarSet({ type: 'NotUpdate' }, { updatedPods: 0, updatedReadyPods: 0 }),
    state: 'Healthy',
    reason: 'Updated',
  },
  {
    name: 'no matched pods',
    input: sidecarSet({}, { matchedPods: 0, updatedPods: 0, readyPods: 0, updatedReadyPods: 0 }),
    state: 'Healthy',
    reason: 'Updated',
  },
  { name: 'malformed count', input: sidecarSet({}, { readyPods: 1.5 }), state: 'Unknown', reason: 'MalformedInput' },
  {
    name: 'malformed strategy',
    input: sidecarSet('x' as unknown as Strategy),
    state: 'Unknown',
    reason: 'MalformedInput',
  },
  { name: 'not an object', input: [], state: 'Unknown', reason: 'MalformedInput' },
];

describe('sidecarSetHealth', () => {
  it.each(cases)('$name', ({ input, target, state, reason }) => {
    const result = sidecarSetHealth(input as SidecarSetHealthInput, target);
    expect({ state: result.state, reason: result.reason }).toEqual({ state, reason });
    expect(result.message).not.toBe('');
  });
});
