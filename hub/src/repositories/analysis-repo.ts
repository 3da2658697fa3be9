/**
 * Metric analysis runs (db/schema/analysis.ts) and the clusters' Prometheus URLs the analysis
 * runner asks. Runs are read by (rollout, cluster, attempt) in one query however many there are.
 */
import { and, inArray } from 'drizzle-orm';
import type { DbOrTx } from '../db/client.js';
import { analysisRuns, clusters } from '../db/schema/index.js';
import type { AnalysisRun } from '../domain/rollouts/analysis-run.js';
import { analysisKey } from '../domain/rollouts/decide.js';
import type { AnalysisResult, AnalysisVerdict } from '../domain/rollouts/types.js';

export interface RunKey {
  rolloutId: string;
  cluster: string;
  attempt: number;
}

/** The stored runs of these keys, by analysisKey. */
export async function analysisRunsOf(q: DbOrTx, keys: readonly RunKey[]): Promise<Map<string, AnalysisRun>> {
  const out = new Map<string, AnalysisRun>();
  if (keys.length === 0) return out;
  const wanted = new Set(keys.map((k) => analysisKey(k.rolloutId, k.cluster, k.attempt)));
  const rows = await q
    .select()
    .from(analysisRuns)
    .where(
      and(
        inArray(analysisRuns.rolloutId, [...new Set(keys.map((k) => k.rolloutId))]),
        inArray(analysisRuns.clusterName, [...new Set(keys.map((k) => k.cluster))]),
      ),
    );
  for (const r of rows) {
    const key = analysisKey(r.rolloutId, r.clusterName, r.attempt);
    if (!wanted.has(key)) continue;
    out.set(key, {
      startedAt: r.startedAt.getTime(),
      measurements: r.measurements as AnalysisResult[][],
      verdict: r.verdict as AnalysisVerdict,
      message: r.message,
    });
  }
  return out;
}

export async function saveAnalysisRun(q: DbOrTx, key: RunKey, run: AnalysisRun, at: Date): Promise<void> {
  const values = {
    startedAt: new Date(run.startedAt),
    measurements: run.measurements,
    verdict: run.verdict,
    message: run.message,
    updatedAt: at,
  };
  await q
    .insert(analysisRuns)
    .values({ rolloutId: key.rolloutId, clusterName: key.cluster, attempt: key.attempt, ...values })
    .onConflictDoUpdate({
      target: [analysisRuns.rolloutId, analysisRuns.clusterName, analysisRuns.attempt],
      set: values,
    });
}

export interface ClusterPrometheus {
  url: string;
  /** File names in the hub's Prometheus secrets directory; each absent: not used. */
  tokenRef?: string;
  basicAuth?: { usernameRef: string; passwordRef: string };
  caRef?: string;
}

/** The Prometheus of each of these clusters that has one. */
export async function prometheusOf(q: DbOrTx, names: readonly string[]): Promise<Map<string, ClusterPrometheus>> {
  if (names.length === 0) return new Map();
  const rows = await q
    .select({
      name: clusters.name,
      url: clusters.prometheusUrl,
      tokenRef: clusters.prometheusTokenRef,
      usernameRef: clusters.prometheusUsernameRef,
      passwordRef: clusters.prometheusPasswordRef,
      caRef: clusters.prometheusCaRef,
    })
    .from(clusters)
    .where(inArray(clusters.name, [...names]));
  return new Map(
    rows.flatMap((r) => {
      if (!r.url) return [];
      const prom: ClusterPrometheus = { url: r.url };
      if (r.tokenRef) prom.tokenRef = r.tokenRef;
      if (r.usernameRef && r.passwordRef) prom.basicAuth = { usernameRef: r.usernameRef, passwordRef: r.passwordRef };
      if (r.caRef) prom.caRef = r.caRef;
      return [[r.name, prom] as const];
    }),
  );
}
