/**
 * What the rollout scheduler observes of its rollouts' workloads and member clusters, read in a
 * few queries however many rollouts there are: which workloads exist and what they depend on, the
 * desired rows and latest status reports of them and their dependencies on the members, and the
 * members' state, last heartbeat and maintenance windows.
 */
import { and, inArray, isNull } from 'drizzle-orm';
import type { DbOrTx } from '../db/client.js';
import { clusters, desiredObjects, objectStatus, workloads } from '../db/schema/index.js';
import { refLabel } from '../domain/dependencies.js';
import { analysisRunsOf, type RunKey } from './analysis-repo.js';
import { observePrePulls } from './pre-pull-repo.js';
import {
  memberKey,
  type MeasuredAnalysis,
  type FleetView,
  type RolloutRun,
  type ViewedCluster,
  type ViewedDependency,
} from '../domain/rollouts/decide.js';

const refKey = (r: { kind: string; namespace: string; name: string }): string => `${r.kind}|${r.namespace}|${r.name}`;

/** Each workload's dependencies, resolved to the live workloads they name. */
async function resolveDependencies(
  q: DbOrTx,
  ws: readonly { id: string; dependsOn: Parameters<typeof refLabel>[0][] }[],
): Promise<Map<string, ViewedDependency[]>> {
  const out = new Map<string, ViewedDependency[]>();
  if (ws.every((w) => w.dependsOn.length === 0)) return out;
  const names = [...new Set(ws.flatMap((w) => w.dependsOn.map((r) => r.name)))];
  const live = await q
    .select({ id: workloads.id, kind: workloads.kind, namespace: workloads.namespace, name: workloads.name })
    .from(workloads)
    .where(and(inArray(workloads.name, names), isNull(workloads.deletedAt)));
  const byKey = new Map(live.map((w) => [refKey(w), w.id]));
  for (const w of ws) {
    if (w.dependsOn.length === 0) continue;
    out.set(
      w.id,
      w.dependsOn.map((r) => ({ label: refLabel(r), workloadId: byKey.get(refKey(r)) })),
    );
  }
  return out;
}

export async function observeRollouts(q: DbOrTx, runs: readonly RolloutRun[]): Promise<FleetView> {
  const workloadIds = [...new Set(runs.map((r) => r.workloadId))];
  const members = [...new Set(runs.flatMap((r) => r.plan.waves.flatMap((w) => w.members)))];
  const ws = await q
    .select({ id: workloads.id, dependsOn: workloads.dependsOn })
    .from(workloads)
    .where(inArray(workloads.id, workloadIds));
  const dependencies = await resolveDependencies(q, ws);
  // Desired rows and reports of the dependencies too: their health gates the members' starts.
  const observed = [
    ...new Set([...workloadIds, ...[...dependencies.values()].flat().flatMap((d) => d.workloadId ?? [])]),
  ];
  const view = {
    workloads: new Set(ws.map((w) => w.id)),
    dependencies,
    desired: new Map<string, { revision: number; generation: number; deleted: boolean }>(),
    status: new Map<
      string,
      { revision: number; generation: number; health: string; message: string; storedAt: Date }
    >(),
    clusters: new Map<string, ViewedCluster>(),
  };
  if (members.length === 0) return view;
  // A workload's kind/namespace/name never change, so rows of these workload ids are exactly
  // the rows of the objects they own (a same-named object of another workload never counts).
  const desired = await q
    .select({
      workloadId: desiredObjects.workloadId,
      cluster: desiredObjects.clusterName,
      revision: desiredObjects.revision,
      generation: desiredObjects.generation,
      deleted: desiredObjects.deleted,
    })
    .from(desiredObjects)
    .where(and(inArray(desiredObjects.workloadId, observed), inArray(desiredObjects.clusterName, members)));
  for (const { workloadId, cluster, ...d } of desired) view.desired.set(memberKey(workloadId, cluster), d);
  const status = await q
    .select({
      workloadId: objectStatus.workloadId,
      cluster: objectStatus.clusterName,
      revision: objectStatus.revision,
      generation: objectStatus.generation,
      health: objectStatus.health,
      message: objectStatus.message,
      storedAt: objectStatus.storedAt,
    })
    .from(objectStatus)
    .where(and(inArray(objectStatus.clusterName, members), inArray(objectStatus.workloadId, observed)));
  for (const { workloadId, cluster, ...s } of status) view.status.set(memberKey(workloadId, cluster), s);
  const cls = await q
    .select({
      name: clusters.name,
      state: clusters.state,
      lastHeartbeatAt: clusters.lastHeartbeatAt,
      maintenanceWindows: clusters.maintenanceWindows,
    })
    .from(clusters)
    .where(inArray(clusters.name, members));
  for (const { name, ...c } of cls) view.clusters.set(name, c);
  const prePull = await observePrePulls(
    q,
    runs.flatMap((r) => (r.id !== undefined && r.plan.prePull ? [r.id] : [])),
  );
  return { ...view, analysis: await observeAnalysis(q, runs), prePull };
}

/** What the runner measured for each member whose analysis attempt is running. */
async function observeAnalysis(q: DbOrTx, runs: readonly RolloutRun[]): Promise<Map<string, MeasuredAnalysis>> {
  const keys: RunKey[] = [];
  for (const r of runs) {
    for (const [cluster, cs] of Object.entries(r.state.clusters)) {
      if (r.id !== undefined && cs.analysis?.verdict === 'Running') {
        keys.push({ rolloutId: r.id, cluster, attempt: cs.analysis.attempt });
      }
    }
  }
  const out = new Map<string, MeasuredAnalysis>();
  for (const [key, run] of await analysisRunsOf(q, keys)) {
    out.set(key, {
      verdict: run.verdict,
      measurements: run.measurements.length,
      message: run.message,
      results: run.measurements.at(-1) ?? [],
    });
  }
  return out;
}
