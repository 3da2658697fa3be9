import { describe, expect, it } from 'vitest';
import { broadcastJobHealth, type BroadcastJobHealthInput } from './broadcastJobHealth.js';

const job = (
  status: BroadcastJobHealthInput['status'],
  spec: BroadcastJobHealthInput['spec'] = {},
): BroadcastJobHealthInput => ({ spec, status });

describe('broadcastJobHealth', () => {
  it.each([
    [{}, 'Progressing', 'NotStarted'],
    [{ phase: 'running', desired: 3, active: 2, succeeded: 1 }, 'Progressing', 'Running'],
    [{ phase: 'completed', desired: 3, succeeded: 3 }, 'Healthy', 'Completed'],
    [{ phase: 'completed', desired: 3, succeeded: 2, failed: 1 }, 'Degraded', 'PodsFailed'],
    [{ phase: 'paused', desired: 3, failed: 1 }, 'Degraded', 'PausedOnFailure'],
    [{ phase: 'paused', desired: 3 }, 'Progressing', 'Paused'],
    [{ phase: 'failed', desired: 3, failed: 3 }, 'Degraded', 'JobFailed'],
  ] as const)('%j is %s (%s)', (status, state, reason) => {
    expect(broadcastJobHealth(job(status))).toMatchObject({ state, reason });
  });

  it('explains a failed job with its Failed condition', () => {
    const failed = job({
      phase: 'failed',
      conditions: [{ type: 'Failed', status: 'True', message: 'Job ns/x was active longer than specified deadline' }],
    });
    expect(broadcastJobHealth(failed).message).toBe('Job ns/x was active longer than specified deadline');
  });

  it('calls a Never job healthy once every node’s pod succeeded', () => {
    const never = { completionPolicy: { type: 'Never' } };
    expect(broadcastJobHealth(job({ phase: 'running', desired: 2, succeeded: 2 }, never)).state).toBe('Healthy');
    expect(broadcastJobHealth(job({ phase: 'running', desired: 2, succeeded: 1, active: 1 }, never)).state).toBe(
      'Progressing',
    );
  });

  it('answers Unknown for malformed input, never throwing', () => {
    expect(broadcastJobHealth(job({ phase: 'running', desired: -1 })).state).toBe('Unknown');
    expect(broadcastJobHealth('nope' as unknown as BroadcastJobHealthInput).state).toBe('Unknown');
    expect(broadcastJobHealth(job({ phase: 'failed', conditions: 'x' as never })).state).toBe('Unknown');
  });

  describe('counts a job only for the template its run started from', () => {
    const at = (wanted: string, ran: string | undefined, status: BroadcastJobHealthInput['status']) => ({
      metadata: {
        annotations: {
          'flotilla.io/template-hash': wanted,
          ...(ran === undefined ? {} : { 'flotilla.io/run-template-hash': ran }),
        },
      },
      status,
    });
    const completed = { phase: 'completed', desired: 2, succeeded: 2 };

    it('is Healthy when it completed at the template its spec carries', () => {
      expect(broadcastJobHealth(at('h2', 'h2', completed))).toMatchObject({ state: 'Healthy', reason: 'Completed' });
    });

    it.each([
      ['completed', completed],
      ['failed', { phase: 'failed', desired: 2, failed: 2 }],
      ['running', { phase: 'running', desired: 2, active: 2 }],
    ])('is Progressing when it %s at an older template', (_phase, status) => {
      const v = broadcastJobHealth(at('h2', 'h1', status));
      expect(v).toMatchObject({ state: 'Progressing', reason: 'TemplateNotRun' });
      expect(v.message).toContain('template h2 has not run');
    });

    it('judges by the phase when no run hash was stamped (a job created outside the hub)', () => {
      expect(broadcastJobHealth(at('h2', undefined, completed)).state).toBe('Healthy');
    });

    it('answers Unknown for annotations that are not strings', () => {
      const bad = { metadata: { annotations: { 'flotilla.io/template-hash': 7 } }, status: completed };
      expect(broadcastJobHealth(bad as unknown as BroadcastJobHealthInput).state).toBe('Unknown');
    });
  });
});
