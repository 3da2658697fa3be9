/** Fleet status: per workload (one row per cluster + aggregate) and per cluster (every workload). */
import { ClusterNameParams, ClusterWorkloadStatus, StatusQuery, WorkloadIdParams, WorkloadStatus } from '@flotilla/api';
import { decodeContinue, pageSize, toPage } from '../domain/pagination.js';
import { aggregateStatus } from '../domain/status-aggregate.js';
import { notFound } from '../errors.js';
import { getCluster } from '../repositories/clusters-repo.js';
import { clusterStatusRows, workloadStatusRows } from '../repositories/status-repo.js';
import { getLiveWorkload } from '../repositories/workloads-repo.js';
import { selectorParam } from './clusters.js';
import type { Api, RouteContext } from './context.js';
import { errorResponses } from './responses.js';

const errors = errorResponses;
const tags = ['status'];

export function statusRoutes(api: Api, ctx: RouteContext): void {
  api.get(
    '/workloads/:id/status',
    {
      onRequest: ctx.auth('viewer'),
      schema: {
        tags,
        params: WorkloadIdParams,
        querystring: StatusQuery,
        response: { 200: WorkloadStatus, ...errors },
      },
    },
    async (request) => {
      const w = await getLiveWorkload(ctx.db, request.params.id);
      if (!w) throw notFound(`workload ${request.params.id}`);
      const q = request.query;
      const selector = selectorParam(q.labelSelector);
      const filter = { ...(selector ? { selector } : {}), ...(q.health ? { health: q.health } : {}) };
      const limit = pageSize(q.limit);
      const after = decodeContinue(q.continue, ['string']);
      const now = ctx.now();
      // The aggregate covers every matching cluster, not just this page.
      const all = await workloadStatusRows(ctx.db, w.id, filter, {}, now);
      const rows = after ? all.filter((r) => r.cluster > after[0]) : all;
      const page = toPage(rows.slice(0, limit + 1), limit, (r) => [r.cluster]);
      return { workloadId: w.id, revision: w.currentRevision, aggregate: aggregateStatus(all), ...page };
    },
  );

  api.get(
    '/clusters/:name/status',
    {
      onRequest: ctx.auth('viewer'),
      schema: {
        tags,
        params: ClusterNameParams,
        querystring: StatusQuery,
        response: { 200: ClusterWorkloadStatus, ...errors },
      },
    },
    async (request) => {
      const cluster = await getCluster(ctx.db, request.params.name);
      if (!cluster) throw notFound(`cluster ${request.params.name}`);
      const q = request.query;
      const limit = pageSize(q.limit);
      const after = decodeContinue(q.continue, ['string', 'string', 'string']);
      const rows = await clusterStatusRows(
        ctx.db,
        cluster.name,
        q.health ? { health: q.health } : {},
        { ...(after ? { after } : {}), limit },
        ctx.now(),
      );
      return { cluster: cluster.name, ...toPage(rows, limit, (r) => [r.kind, r.namespace, r.name]) };
    },
  );
}
