/**
 * The analysis runner: the I/O of metric analysis, outside the pure engine. Each scheduler tick
 * (on the active scheduler only) it finds the member clusters whose analysis attempt is running
 * (domain/rollouts/analysis-run.ts), takes the measurements that are due — an instant query per
 * PromQL template against the cluster's Prometheus, with a timeout — and stores each run's
 * measurements and verdict (analysis_runs). The scheduler then observes the runs like windows
 * and dependencies, and the engine moves the cluster. A Prometheus that is missing, unreachable,
 * slow or refuses the query yields an inconclusive measurement, never a stuck tick.
 */
import type { Logger } from 'pino';
import { inArray } from 'drizzle-orm';
import { renderQuery, type AnalysisPlaceholder } from '@flotilla/api';
import type { Db } from '../../db/client.js';
import { workloads } from '../../db/schema/index.js';
import {
  analysisTargets,
  judgeAnswer,
  measurementDue,
  runVerdict,
  type AnalysisRun,
  type QueryAnswer,
} from '../../domain/rollouts/analysis-run.js';
import { analysisKey } from '../../domain/rollouts/decide.js';
import type { AnalysisResult, FrozenAnalysis } from '../../domain/rollouts/types.js';
import {
  analysisRunsOf,
  prometheusOf,
  saveAnalysisRun,
  type ClusterPrometheus,
  type RunKey,
} from '../../repositories/analysis-repo.js';
import type { RolloutRow } from '../../repositories/rollouts-repo.js';
import { accessOf, instantQuery } from './prometheus-client.js';

/** How long one query may take before its measurement is inconclusive. */
export const DEFAULT_QUERY_TIMEOUT_MS = 5000;
/** Measurements taken at once (each is a few HTTP requests). */
const CONCURRENCY = 8;

export interface AnalysisRunnerDeps {
  db: Db;
  logger: Logger;
  now: () => Date;
  queryTimeoutMs?: number;
  /** Credentials and CA bundles by reference: a cluster's refs name files here (docs/adr/0017). */
  secretsDir?: string;
}

interface Due extends RunKey {
  run: AnalysisRun | undefined;
  workloadId: string;
  analysis: FrozenAnalysis;
}

/** Takes every due measurement of these rollouts; returns how many were taken. */
export async function runAnalyses(deps: AnalysisRunnerDeps, rows: readonly RolloutRow[]): Promise<number> {
  const targets = rows.flatMap((r) => analysisTargets(r.plan, r.state).map((t) => ({ row: r, ...t })));
  if (targets.length === 0) return 0;
  const at = deps.now();
  const keys = targets.map((t) => ({ rolloutId: t.row.id, cluster: t.cluster, attempt: t.attempt }));
  const runs = await analysisRunsOf(deps.db, keys);
  const due: Due[] = [];
  for (const t of targets) {
    const run = runs.get(analysisKey(t.row.id, t.cluster, t.attempt));
    if (!measurementDue(run, t.analysis, at.getTime())) continue;
    due.push({
      rolloutId: t.row.id,
      cluster: t.cluster,
      attempt: t.attempt,
      run,
      workloadId: t.row.workloadId,
      analysis: t.analysis,
    });
  }
  if (due.length === 0) return 0;
  const names = await workloadNames(deps.db, [...new Set(due.map((d) => d.workloadId))]);
  const proms = await prometheusOf(deps.db, [...new Set(due.map((d) => d.cluster))]);
  const timeoutMs = deps.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < due.length) {
      const d = due[next++]!;
      const w = names.get(d.workloadId);
      const values = { cluster: d.cluster, namespace: w?.namespace ?? '', workload: w?.name ?? '' };
      const results = await measure(proms.get(d.cluster), d.cluster, d.analysis, values, {
        timeoutMs,
        secretsDir: deps.secretsDir,
      });
      const measurements = [...(d.run?.measurements ?? []), results];
      const run = {
        startedAt: d.run?.startedAt ?? at.getTime(),
        measurements,
        ...runVerdict(measurements, d.analysis.count),
      };
      await saveAnalysisRun(deps.db, d, run, at);
      deps.logger.debug({ rollout: d.rolloutId, cluster: d.cluster, verdict: run.verdict }, 'analysis measured');
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, due.length) }, worker));
  return due.length;
}

async function measure(
  prom: ClusterPrometheus | undefined,
  cluster: string,
  analysis: FrozenAnalysis,
  values: Readonly<Record<AnalysisPlaceholder, string>>,
  opts: { timeoutMs: number; secretsDir: string | undefined },
): Promise<AnalysisResult[]> {
  const access = prom ? await accessOf(prom, opts.secretsDir) : {};
  return Promise.all(
    analysis.queries.map(async (q) => {
      let answer: QueryAnswer;
      if (!prom)
        answer = { error: `cluster ${cluster} has no Prometheus URL (PUT /api/v1/clusters/${cluster}/prometheus)` };
      else if ('error' in access) answer = { error: access.error };
      else answer = await instantQuery(prom.url, access, renderQuery(q.query, values), opts.timeoutMs);
      return judgeAnswer(q, answer);
    }),
  );
}

async function workloadNames(db: Db, ids: string[]) {
  const rows = await db
    .select({ id: workloads.id, name: workloads.name, namespace: workloads.namespace })
    .from(workloads)
    .where(inArray(workloads.id, ids));
  return new Map(rows.map((r) => [r.id, r]));
}
