import { describe, expect, it } from 'vitest';
import { type CloneSetHealthInput, cloneSetHealth } from './cloneSetHealth.js';
import type { HealthState } from './verdict.js';

type Spec = NonNullable<CloneSetHealthInput['spec']>;
type Status = NonNullable<CloneSetHealthInput['status']>;

// A CloneSet of 5 replicas fully rolled out to sample-abc at generation 3.
function cloneSet(spec: Partial<Spec> = {}, status: Partial<Status> = {}, generation = 3): CloneSetHealthInput {
  return {
    metadata: { generation },
    spec: { replicas: 5, ...spec },
    status: {
      observedGeneration: 3,
      replicas: 5,
      availableReplicas: 5,
      updatedReplicas: 5,
      updatedReadyReplicas: 5,
      updatedAvailableReplicas: 5,
      updateRevision: 'sample-abc',
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
  message?: RegExp;
}

const cases: Case[] = [
  { name: 'fully updated and available', input: cloneSet(), state: 'Healthy', reason: 'Updated' },
  {
    name: 'target given as the full revision name',
    input: cloneSet(),
    target: 'sample-abc',
    state: 'Healthy',
    reason: 'Updated',
  },
  { name: 'target given as the short hash', input: cloneSet(), target: 'abc', state: 'Healthy', reason: 'Updated' },
  {
    name: 'update revision is not the target yet',
    input: cloneSet(),
    target: 'sample-def',
    state: 'Progressing',
    reason: 'UpdateRevisionMismatch',
    message: /sample-abc.*sample-def/,
  },
  {
    name: 'no update revision reported with a target',
    input: cloneSet({}, { updateRevision: undefined }),
    target: 'abc',
    state: 'Progressing',
    reason: 'UpdateRevisionMismatch',
  },
  {
    name: 'status from an older generation',
    input: cloneSet({}, { observedGeneration: 2 }),
    state: 'Stale',
    reason: 'StatusNotObserved',
    message: /generation 2.*generation 3/,
  },
  {
    name: 'stale status wins over a failure condition',
    input: cloneSet({}, { observedGeneration: 2, conditions: [{ type: 'FailedUpdate', status: 'True' }] }),
    state: 'Stale',
    reason: 'StatusNotObserved',
  },
  {
    name: 'no status at all',
    input: { metadata: { generation: 1 }, spec: { replicas: 1 } },
    state: 'Stale',
    reason: 'StatusNotObserved',
  },
  {
    name: 'status newer than the spec read',
    input: cloneSet({}, { observedGeneration: 4 }),
    state: 'Unknown',
    reason: 'ObservedGenerationAhead',
  },
  { name: 'no metadata.generation', input: { spec: {}, status: {} }, state: 'Unknown', reason: 'MissingGeneration' },
  {
    name: 'FailedUpdate condition',
    input: cloneSet({}, { conditions: [{ type: 'FailedUpdate', status: 'True', message: 'pods "x" is forbidden' }] }),
    state: 'Degraded',
    reason: 'FailedUpdate',
    message: /forbidden/,
  },
  {
    name: 'FailedScale condition',
    input: cloneSet({}, { conditions: [{ type: 'FailedScale', status: 'True', message: 'exceeded quota' }] }),
    state: 'Degraded',
    reason: 'FailedScale',
  },
  {
    name: 'a False failure condition is ignored',
    input: cloneSet({}, { conditions: [{ type: 'FailedScale', status: 'False' }] }),
    state: 'Healthy',
    reason: 'Updated',
  },
  {
    name: 'progress deadline exceeded (v1.9)',
    input: cloneSet({}, { conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] }),
    state: 'Degraded',
    reason: 'ProgressDeadlineExceeded',
  },
  {
    name: 'pods still being updated',
    input: cloneSet({}, { updatedReplicas: 3, updatedReadyReplicas: 3, updatedAvailableReplicas: 3 }),
    state: 'Progressing',
    reason: 'WaitingForUpdatedPods',
    message: /3 of 5/,
  },
  {
    name: 'updated pods not available yet',
    input: cloneSet({}, { updatedAvailableReplicas: 4 }),
    state: 'Progressing',
    reason: 'WaitingForUpdatedPodsAvailable',
  },
  {
    name: 'older controller without updatedAvailableReplicas uses updatedReadyReplicas',
    input: cloneSet({}, { updatedAvailableReplicas: undefined, updatedReadyReplicas: 4 }),
    state: 'Progressing',
    reason: 'WaitingForUpdatedPodsAvailable',
  },
  {
    name: 'paused mid-update',
    input: cloneSet({ updateStrategy: { paused: true } }, { updatedReplicas: 2, updatedAvailableReplicas: 2 }),
    state: 'Progressing',
    reason: 'Paused',
  },
  {
    name: 'canary step done: partition 3 of 5, 2 updated and available',
    input: cloneSet(
      { updateStrategy: { partition: 3 } },
      { updatedReplicas: 2, updatedReadyReplicas: 2, updatedAvailableReplicas: 2 },
    ),
    state: 'Healthy',
    reason: 'Updated',
    message: /partition keeps 3/,
  },
  {
    name: 'canary step not done: partition 3 of 5, 1 updated',
    input: cloneSet({ updateStrategy: { partition: 3 } }, { updatedReplicas: 1, updatedAvailableReplicas: 1 }),
    state: 'Progressing',
    reason: 'WaitingForUpdatedPods',
  },
  {
    name: 'percentage partition rounds up: 50% of 5 keeps 3',
    input: cloneSet({ updateStrategy: { partition: '50%' } }, { updatedReplicas: 2, updatedAvailableReplicas: 2 }),
    state: 'Healthy',
    reason: 'Updated',
  },
  {
    name: 'partition 99% still updates one pod',
    input: cloneSet({ updateStrategy: { partition: '99%' } }, { updatedReplicas: 0, updatedAvailableReplicas: 0 }),
    state: 'Progressing',
    reason: 'WaitingForUpdatedPods',
    message: /0 of 1/,
  },
  {
    name: 'partition 100% updates nothing',
    input: cloneSet({ updateStrategy: { partition: '100%' } }, { updatedReplicas: 0, updatedAvailableReplicas: 0 }),
    state: 'Healthy',
    reason: 'Updated',
  },
  {
    name: 'surge pods still present',
    input: cloneSet({}, { replicas: 6 }),
    state: 'Progressing',
    reason: 'Scaling',
  },
  {
    name: 'scaling up',
    input: cloneSet({ replicas: 7 }, { replicas: 5 }),
    state: 'Progressing',
    reason: 'WaitingForUpdatedPods',
  },
  {
    name: 'old pods unavailable beyond maxUnavailable with a partition',
    input: cloneSet(
      { replicas: 10, updateStrategy: { partition: 8, maxUnavailable: 1 } },
      { replicas: 10, updatedReplicas: 2, updatedAvailableReplicas: 2, availableReplicas: 8 },
    ),
    state: 'Progressing',
    reason: 'WaitingForAvailability',
  },
  {
    name: 'old pods unavailable within the default 20%',
    input: cloneSet(
      { replicas: 10, updateStrategy: { partition: 8 } },
      { replicas: 10, updatedReplicas: 2, updatedAvailableReplicas: 2, availableReplicas: 8 },
    ),
    state: 'Healthy',
    reason: 'Updated',
  },
  {
    name: 'maxUnavailable rounds down when maxSurge is set',
    input: cloneSet(
      { replicas: 4, updateStrategy: { partition: 3, maxUnavailable: '30%', maxSurge: 1 } },
      { replicas: 4, updatedReplicas: 1, updatedAvailableReplicas: 1, availableReplicas: 2 },
    ),
    state: 'Progressing',
    reason: 'WaitingForAvailability',
  },
  {
    name: 'maxUnavailable rounds up without maxSurge',
    input: cloneSet(
      { replicas: 4, updateStrategy: { partition: 3, maxUnavailable: '30%' } },
      { replicas: 4, updatedReplicas: 1, updatedAvailableReplicas: 1, availableReplicas: 2 },
    ),
    state: 'Healthy',
    reason: 'Updated',
  },
  {
    name: 'replicas default to 1',
    input: cloneSet(
      { replicas: undefined },
      { replicas: 1, updatedReplicas: 1, updatedAvailableReplicas: 1, availableReplicas: 1 },
    ),
    state: 'Healthy',
    reason: 'Updated',
  },
  {
    name: 'scaled to zero',
    input: cloneSet(
      { replicas: 0 },
      { replicas: 0, updatedReplicas: 0, updatedAvailableReplicas: 0, availableReplicas: 0 },
    ),
    state: 'Healthy',
    reason: 'Updated',
  },
  { name: 'not an object', input: 'CloneSet', state: 'Unknown', reason: 'MalformedInput' },
  { name: 'null', input: null, state: 'Unknown', reason: 'MalformedInput' },
  {
    name: 'negative count',
    input: cloneSet({}, { updatedReplicas: -1 }),
    state: 'Unknown',
    reason: 'MalformedInput',
    message: /status.updatedReplicas/,
  },
  {
    name: 'string count',
    input: cloneSet({}, { replicas: '5' as unknown as number }),
    state: 'Unknown',
    reason: 'MalformedInput',
  },
  {
    name: 'bad partition',
    input: cloneSet({ updateStrategy: { partition: 'half' } }),
    state: 'Unknown',
    reason: 'MalformedInput',
    message: /partition/,
  },
  {
    name: 'conditions not a list',
    input: cloneSet({}, { conditions: {} as unknown as Status['conditions'] }),
    state: 'Unknown',
    reason: 'MalformedInput',
  },
  {
    name: 'spec is a string',
    input: { metadata: { generation: 1 }, spec: 'x', status: { observedGeneration: 1 } },
    state: 'Unknown',
    reason: 'MalformedInput',
  },
];

describe('cloneSetHealth', () => {
  it.each(cases)('$name', ({ input, target, state, reason, message }) => {
    const result = cloneSetHealth(input as CloneSetHealthInput, target);
    expect(result.state).toBe(state);
    expect(result.reason).toBe(reason);
    expect(result.message).not.toBe('');
    if (message) expect(result.message).toMatch(message);
  });
});
