import { describe, expect, it } from 'vitest';
import { type ImagePullJobHealthInput, imagePullJobHealth } from './imagePullJobHealth.js';
import type { HealthState } from './verdict.js';

type Status = NonNullable<ImagePullJobHealthInput['status']>;

const started = '2026-07-01T10:00:00Z';
const finished = '2026-07-01T10:05:00Z';

function job(status: Partial<Status> | null, completionPolicy?: string): ImagePullJobHealthInput {
  return {
    metadata: { generation: 1 },
    spec: completionPolicy ? { completionPolicy: { type: completionPolicy } } : {},
    status: status === null ? null : { desired: 3, active: 0, succeeded: 0, failed: 0, ...status },
  };
}

interface Case {
  name: string;
  input: unknown;
  state: HealthState;
  reason: string;
  message?: RegExp;
}

const cases: Case[] = [
  {
    name: 'completed without failures',
    input: job({ startTime: started, completionTime: finished, succeeded: 3, message: 'job has completed' }),
    state: 'Healthy',
    reason: 'Completed',
  },
  {
    name: 'completed with failures lists the nodes',
    input: job({
      startTime: started,
      completionTime: finished,
      succeeded: 1,
      failed: 2,
      failedNodes: ['node-a', 'node-b'],
    }),
    state: 'Degraded',
    reason: 'ImagePullFailed',
    message: /2 of 3 .*node-a, node-b/,
  },
  {
    name: 'a failure before completion is already Degraded',
    input: job({ startTime: started, active: 1, succeeded: 1, failed: 1, failedNodes: ['node-c'] }),
    state: 'Degraded',
    reason: 'ImagePullFailed',
    message: /node-c/,
  },
  {
    name: 'long failed-node lists are cut',
    input: job({
      startTime: started,
      desired: 20,
      failed: 12,
      failedNodes: Array.from({ length: 12 }, (_, i) => `n${i}`),
    }),
    state: 'Degraded',
    reason: 'ImagePullFailed',
    message: /n9 and 2 more$/,
  },
  {
    name: 'deadline exceeded',
    input: job({
      startTime: started,
      completionTime: finished,
      succeeded: 1,
      message: 'job exceeds activeDeadlineSeconds',
    }),
    state: 'Degraded',
    reason: 'DeadlineExceeded',
  },
  {
    name: 'pulling',
    input: job({ startTime: started, active: 2, succeeded: 1, message: 'job is running, progress 33.3%' }),
    state: 'Progressing',
    reason: 'Pulling',
    message: /1 of 3/,
  },
  { name: 'not started', input: job({}), state: 'Progressing', reason: 'NotStarted' },
  { name: 'no status yet', input: job(null), state: 'Progressing', reason: 'NotStarted' },
  {
    name: 'Never policy: every node pulled',
    input: job({ startTime: started, succeeded: 3 }, 'Never'),
    state: 'Healthy',
    reason: 'AllNodesPulled',
  },
  {
    name: 'Never policy: still pulling',
    input: job({ startTime: started, active: 1, succeeded: 2 }, 'Never'),
    state: 'Progressing',
    reason: 'Pulling',
  },
  {
    name: 'observedGeneration is checked when present',
    input: {
      ...job({ startTime: started, completionTime: finished, succeeded: 3 }),
      metadata: { generation: 2 },
      status: { observedGeneration: 1 },
    },
    state: 'Stale',
    reason: 'StatusNotObserved',
  },
  {
    name: 'failedNodes not a list',
    input: job({ failedNodes: 'node-a' as unknown as string[] }),
    state: 'Unknown',
    reason: 'MalformedInput',
  },
  { name: 'negative failed', input: job({ failed: -2 }), state: 'Unknown', reason: 'MalformedInput' },
  {
    name: 'completionTime not a string',
    input: job({ completionTime: 5 as unknown as string }),
    state: 'Unknown',
    reason: 'MalformedInput',
  },
  { name: 'undefined', input: undefined, state: 'Unknown', reason: 'MalformedInput' },
];

describe('imagePullJobHealth', () => {
  it.each(cases)('$name', ({ input, state, reason, message }) => {
    const result = imagePullJobHealth(input as ImagePullJobHealthInput);
    expect({ state: result.state, reason: result.reason }).toEqual({ state, reason });
    if (message) expect(result.message).toMatch(message);
  });
});
