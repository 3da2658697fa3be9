/**
 * A rollout's dry run: the same checks and the same frozen plan as a real start
 * (start-rollout.ts: prepareStart), explained for every cluster of the fleet by the pure
 * previewPlan — nothing is written. Reads the fleet's clusters (state, heartbeat, windows) and the
 * manifests the hub sends for the workload now, to diff them against the target's.
 */
import type { RolloutPreview } from '@flotilla/api';
import type { Tx } from '../../db/client.js';
import { clusterHealth } from '../../domain/cluster-health.js';
import { compileWindows } from '../../domain/maintenance-windows.js';
import { renderManifest } from '../../domain/manifest.js';
import { previewPlan, type PreviewFleetCluster } from '../../domain/rollouts/preview.js';
import type { FrozenPlan } from '../../domain/rollouts/types.js';
import { allClusters } from '../../repositories/clusters-repo.js';
import { liveManifests } from '../../repositories/desired-repo.js';
import type { RevisionRow, WorkloadRow } from '../../repositories/workloads-repo.js';
import type { WorkloadAdmission } from '../workload-admission.js';
import { contentOf, identityOf } from '../desired-sync.js';
import { prepareStart, type StartRequest } from './start-rollout.js';

export interface PreviewDeps {
  admission?: WorkloadAdmission | undefined;
  now: () => Date;
  /** A cluster without a heartbeat this long is offline (its preview says so). */
  heartbeatTimeoutMs: number;
}

/** What a preview explains: a workload, the revision its plan moves clusters to, the plan. */
export interface PreviewSubject {
  w: WorkloadRow;
  target: RevisionRow;
  plan: FrozenPlan;
}

/** Explains a plan per cluster of the fleet and per wave (previewPlan), reading what it needs. */
export async function previewOf(
  deps: PreviewDeps,
  tx: Tx,
  { w, target, plan }: PreviewSubject,
): Promise<RolloutPreview> {
  const at = deps.now();
  const identity = identityOf(w);
  const current = await liveManifests(tx, identity);
  const fleet: PreviewFleetCluster[] = (await allClusters(tx))
    .filter((c) => c.state !== 'removed')
    .map((c) => {
      const now = current.get(c.name);
      return {
        name: c.name,
        state: c.state,
        online: clusterHealth(c.state, c.lastHeartbeatAt, at, deps.heartbeatTimeoutMs) === 'Online',
        windows: compileWindows(c.maintenanceWindows),
        ...(now ? { current: now } : {}),
      };
    });
  const content = contentOf(target);
  const preview = previewPlan({
    plan,
    fleet,
    manifestFor: (cluster) => renderManifest(identity, content, cluster),
    at: at.getTime(),
  });
  return {
    workloadId: w.id,
    targetRevision: target.revision,
    previousRevision: w.stableRevision,
    failureBudget: plan.failureBudget,
    onFailure: plan.onFailure,
    offlinePolicy: plan.offlinePolicy,
    ...preview,
    at: at.toISOString(),
  };
}

/** The preview of a start: its checks and frozen plan (prepareStart), explained. */
export async function previewRollout(deps: PreviewDeps, tx: Tx, req: StartRequest): Promise<RolloutPreview> {
  return previewOf(deps, tx, await prepareStart(deps, tx, req));
}
