/** Fleet-wide summary of one workload's per-cluster status rows. */
import type { ObjectStatusRow, StatusAggregate } from '@flotilla/api';

export function aggregateStatus(rows: readonly ObjectStatusRow[]): StatusAggregate {
  const byHealth: Record<string, number> = {};
  const agg: StatusAggregate = {
    clusters: rows.length,
    upToDate: 0,
    byHealth,
    replicas: 0,
    readyReplicas: 0,
    updatedReplicas: 0,
    availableReplicas: 0,
  };
  for (const row of rows) {
    byHealth[row.health] = (byHealth[row.health] ?? 0) + 1;
    if (row.upToDate) agg.upToDate++;
    if (row.counts) {
      agg.replicas += row.counts.replicas;
      agg.readyReplicas += row.counts.readyReplicas;
      agg.updatedReplicas += row.counts.updatedReplicas;
      agg.availableReplicas += row.counts.availableReplicas;
    }
  }
  return agg;
}
