/**
 * Fleet status as the API shows it: per workload (one row per cluster it is placed on, and the
 * aggregate over every matching cluster) and per cluster (every workload object placed there).
 */
import type { ClusterWorkloadStatus, StatusQuery, WorkloadStatus } from '@flotilla/api';
import type { Db } from '../db/client.js';
import { selectorParam } from '../domain/label-selector.js';
import { paginate } from '../domain/pagination.js';
import { aggregateStatus } from '../domain/status-aggregate.js';
import { notFound } from '../errors.js';
import { getCluster } from '../repositories/clusters-repo.js';
import { clusterStatusRows, workloadStatusRows } from '../repositories/status-repo.js';
import { getLiveWorkload } from '../repositories/workloads-repo.js';

export interface StatusService {
  ofWorkload(id: string, query: StatusQuery): Promise<WorkloadStatus>;
  ofCluster(name: string, query: StatusQuery): Promise<ClusterWorkloadStatus>;
}

export function createStatusService(deps: { db: Db; now: () => Date }): StatusService {
  const { db, now } = deps;
  return {
    async ofWorkload(id, q) {
      const w = await getLiveWorkload(db, id);
      if (!w) throw notFound(`workload ${id}`);
      const selector = selectorParam(q.labelSelector);
      const filter = { ...(selector ? { selector } : {}), ...(q.health ? { health: q.health } : {}) };
      // The aggregate covers every matching cluster, not just this page.
      let all: Awaited<ReturnType<typeof workloadStatusRows>> = [];
      const page = await paginate(
        q,
        ['string'],
        async (after, limit) => {
          all = await workloadStatusRows(db, w.id, filter, {}, now());
          const rows = after ? all.filter((r) => r.cluster > after[0]) : all;
          return rows.slice(0, limit + 1);
        },
        (r) => [r.cluster],
        (r) => r,
      );
      return { workloadId: w.id, revision: w.currentRevision, aggregate: aggregateStatus(all), ...page };
    },

    async ofCluster(name, q) {
      const cluster = await getCluster(db, name);
      if (!cluster) throw notFound(`cluster ${name}`);
      const health = q.health ? { health: q.health } : {};
      const page = await paginate(
        q,
        ['string', 'string', 'string'],
        (after, limit) => clusterStatusRows(db, cluster.name, health, { ...(after ? { after } : {}), limit }, now()),
        (r) => [r.kind, r.namespace, r.name],
        (r) => r,
      );
      return { cluster: cluster.name, ...page };
    },
  };
}
