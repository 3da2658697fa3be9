import { describe, expect, it } from 'vitest';
import { judgeAnswer, measurementDue, runVerdict, valueOf, type AnalysisRun } from './analysis-run.js';
import type { AnalysisResult } from './types.js';

const analysis = { queries: [], intervalSeconds: 30, count: 3 };
const q = { name: 'errors', successCondition: 'result < 0.05', failureCondition: 'result >= 0.1' };
const pass: AnalysisResult = { name: 'errors', value: 0, outcome: 'Passed', message: '' };

describe('analysis runs', () => {
  it('measure at once, then every interval of the scheduler clock, count times', () => {
    expect(measurementDue(undefined, analysis, 0)).toBe(true);
    const run: AnalysisRun = { startedAt: 1000, measurements: [[pass]], verdict: 'Running', message: '' };
    expect(measurementDue(run, analysis, 30_999)).toBe(false);
    expect(measurementDue(run, analysis, 31_000)).toBe(true);
    expect(measurementDue({ ...run, measurements: [[pass], [pass], [pass]] }, analysis, 1e9)).toBe(false);
    expect(measurementDue({ ...run, verdict: 'Inconclusive' }, analysis, 1e9)).toBe(false);
  });

  it('read one value from an instant query: scalar or one series; else say why not', () => {
    const vector = (result: unknown[]) => ({ status: 'success', data: { resultType: 'vector', result } });
    expect(valueOf(vector([{ metric: {}, value: [1, '0.25'] }]))).toEqual({ value: 0.25 });
    expect(valueOf({ status: 'success', data: { resultType: 'scalar', result: [1, '2'] } })).toEqual({ value: 2 });
    expect(valueOf(vector([{ metric: {}, value: [1, 'NaN'] }]))).toEqual({ value: NaN });
    expect(valueOf(vector([]))).toEqual({ error: 'no data' });
    expect(valueOf(vector([{ value: [1, '1'] }, { value: [1, '2'] }]))).toEqual({
      error: '2 series; the query must return one (aggregate it)',
    });
    expect(valueOf({ status: 'error', error: 'parse error' })).toEqual({ error: 'query refused: parse error' });
  });

  it('judge each answer by its conditions', () => {
    expect(judgeAnswer(q, { value: 0.01 })).toMatchObject({ outcome: 'Passed', message: 'result < 0.05 (0.01)' });
    expect(judgeAnswer(q, { value: 0.5 })).toMatchObject({ outcome: 'Failed', message: 'result >= 0.1 (0.5)' });
    expect(judgeAnswer(q, { value: 0.07 })).toMatchObject({
      outcome: 'Inconclusive',
      message: 'neither condition holds (0.07)',
    });
    expect(judgeAnswer(q, { error: 'no data' })).toEqual({
      name: 'errors',
      value: null,
      outcome: 'Inconclusive',
      message: 'no data',
    });
  });

  it('decide a run: a failure or an inconclusive measurement at once, else count passes', () => {
    const fail = { ...pass, outcome: 'Failed' as const, message: 'result >= 0.1 (0.5)' };
    const unsure = { ...pass, name: 'latency', outcome: 'Inconclusive' as const, message: 'no data' };
    expect(runVerdict([[pass]], 3)).toEqual({ verdict: 'Running', message: '1/3 measurements passed' });
    expect(runVerdict([[pass], [pass], [pass]], 3)).toEqual({ verdict: 'Passed', message: '3/3 measurements passed' });
    expect(runVerdict([[pass, unsure], [fail]], 3)).toEqual({
      verdict: 'Failed',
      message: 'errors: result >= 0.1 (0.5)',
    });
    expect(runVerdict([[pass, unsure]], 3)).toEqual({ verdict: 'Inconclusive', message: 'latency: no data' });
  });
});
