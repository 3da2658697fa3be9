/**
 * What the rollout scheduler observes of its rollouts' workloads and member clusters, read in
 * four queries however many rollouts there are: which workloads exist, their desired rows and
 * latest status reports on the members, and the members' state, last heartbeat and maintenance
 * windows.
 */
import { and, inArray } from 'drizzle-orm';
import type { DbOrTx } from '../db/client.js';
import { clusters, desiredObjects, objectStatus, workloads } from '../db/schema/index.js';
import { memberKey, type FleetView, type RolloutRun, type ViewedCluster } from '../domain/rollouts/decide.js';

export async function observeRollouts(q: DbOrTx, runs: readonly RolloutRun[]): Promise<FleetView> {
  const workloadIds = [...new Set(runs.map((r) => r.workloadId))];
  const members = [...new Set(runs.flatMap((r) => r.plan.waves.flatMap((w) => w.members)))];
  const ws = await q.select({ id: workloads.id }).from(workloads).where(inArray(workloads.id, workloadIds));
  const view = {
    workloads: new Set(ws.map((w) => w.id)),
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
    .where(and(inArray(desiredObjects.workloadId, workloadIds), inArray(desiredObjects.clusterName, members)));
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
    .where(and(inArray(objectStatus.clusterName, members), inArray(objectStatus.workloadId, workloadIds)));
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
  return view;
}
