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
import { allClusters } from '../../repositories/clusters-repo.js';
import { liveManifests } from '../../repositories/desired-repo.js';
import type { WorkloadAdmission } from '../workload-admission.js';
import { contentOf, identityOf } from '../desired-sync.js';
import { prepareStart, type StartRequest } from './start-rollout.js';

export interface PreviewDeps {
  admission?: WorkloadAdmission | undefined;
  now: () => Date;
  /** A cluster without a heartbeat this long is offline (its preview says so). */
  heartbeatTimeoutMs: number;
}

export async function previewRollout(deps: PreviewDeps, tx: Tx, req: StartRequest): Promise<RolloutPreview> {
  const { w, target, plan } = await prepareStart(deps, tx, req);
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
