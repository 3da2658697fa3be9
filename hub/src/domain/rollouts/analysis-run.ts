/**
 * The pure part of the analysis runner (services/rollouts/analysis-runner.ts): which clusters
 * need a measurement now, how a Prometheus instant-query answer becomes one value, how each
 * query's value is judged, and the verdict of a run from its measurements. Intervals are counted
 * on the scheduler's clock (so a test's fake clock drives them); each measurement asks
 * Prometheus for its value at the moment of asking.
 */
import { judge, type MeasurementOutcome } from '@flotilla/api';
import type { AnalysisResult, AnalysisVerdict, FrozenAnalysis, RolloutState } from './types.js';

/** A stored run: one (rollout, cluster, attempt). */
export interface AnalysisRun {
  startedAt: number;
  /** Each measurement's results, one per query, oldest first. */
  measurements: AnalysisResult[][];
  verdict: AnalysisVerdict;
  message: string;
}

/** A cluster of a rollout whose analysis is running (the runner measures these). */
export interface AnalysisTarget {
  cluster: string;
  attempt: number;
  analysis: FrozenAnalysis;
}

/** The clusters of a stepped rollout whose current analysis attempt is still running. */
export function analysisTargets(
  plan: { waves: { analysis?: FrozenAnalysis }[] },
  state: RolloutState,
): AnalysisTarget[] {
  if (state.phase !== 'Progressing' && state.phase !== 'WaitingApproval') return [];
  const out: AnalysisTarget[] = [];
  for (const [cluster, cs] of Object.entries(state.clusters)) {
    const analysis = plan.waves[cs.wave]?.analysis;
    if (cs.phase !== 'Soaking' || !analysis || cs.analysis?.verdict !== 'Running') continue;
    out.push({ cluster, attempt: cs.analysis.attempt, analysis });
  }
  return out;
}

/** Whether a run (absent: not started) takes its next measurement at `now`. */
export function measurementDue(run: AnalysisRun | undefined, analysis: FrozenAnalysis, now: number): boolean {
  if (!run) return true;
  if (run.verdict !== 'Running' || run.measurements.length >= analysis.count) return false;
  return now >= run.startedAt + run.measurements.length * analysis.intervalSeconds * 1000;
}

/** A query's answer: one value, or why there is none. */
export type QueryAnswer = { value: number } | { error: string };

/**
 * The one value of an instant query's JSON answer: a scalar, or a vector of exactly one series
 * (none is "no data"; several cannot be judged by one comparison: aggregate in the query).
 */
export function valueOf(body: unknown): QueryAnswer {
  const b = body as { status?: string; error?: string; data?: { resultType?: string; result?: unknown } };
  if (b?.status !== 'success') return { error: `query refused: ${b?.error ?? 'no status'}` };
  const { resultType, result } = b.data ?? {};
  const sample = (pair: unknown): QueryAnswer => {
    const v = Array.isArray(pair) ? Number(pair[1]) : NaN;
    return Array.isArray(pair) && typeof pair[1] === 'string' ? { value: v } : { error: 'malformed sample' };
  };
  if (resultType === 'scalar') return sample(result);
  if (resultType !== 'vector' || !Array.isArray(result)) return { error: `unsupported result type ${resultType}` };
  if (result.length === 0) return { error: 'no data' };
  if (result.length > 1) return { error: `${result.length} series; the query must return one (aggregate it)` };
  return sample((result[0] as { value?: unknown }).value);
}

/** One query's measured answer judged by its conditions. */
export function judgeAnswer(
  q: { name: string; successCondition?: string | undefined; failureCondition?: string | undefined },
  answer: QueryAnswer,
): AnalysisResult {
  if ('error' in answer) return { name: q.name, value: null, outcome: 'Inconclusive', message: answer.error };
  const outcome = judge(q, answer.value);
  const why =
    outcome === 'Failed'
      ? (q.failureCondition ?? `not ${q.successCondition}`)
      : outcome === 'Passed'
        ? (q.successCondition ?? `not ${q.failureCondition}`)
        : Number.isFinite(answer.value)
          ? 'neither condition holds'
          : 'not a finite number';
  return { name: q.name, value: answer.value, outcome, message: `${why} (${answer.value})` };
}

const WORST: MeasurementOutcome[] = ['Failed', 'Inconclusive', 'Passed'];

/**
 * The run's verdict after its measurements: a failed or inconclusive measurement decides at once
 * (the failed one wins); `count` passed measurements pass; fewer keep it running.
 */
export function runVerdict(
  measurements: AnalysisResult[][],
  count: number,
): { verdict: AnalysisVerdict; message: string } {
  for (const outcome of WORST.slice(0, 2)) {
    for (const m of measurements) {
      const bad = m.filter((r) => r.outcome === outcome);
      if (bad.length > 0) return { verdict: outcome, message: bad.map((r) => `${r.name}: ${r.message}`).join('; ') };
    }
  }
  if (measurements.length >= count)
    return { verdict: 'Passed', message: `${measurements.length}/${count} measurements passed` };
  return { verdict: 'Running', message: `${measurements.length}/${count} measurements passed` };
}
