/** Fleet status: per workload (one row per cluster + aggregate) and per cluster (every workload). */
import { ClusterNameParams, ClusterWorkloadStatus, StatusQuery, WorkloadIdParams, WorkloadStatus } from '@flotilla/api';
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
    async (request) => ctx.status.ofWorkload(request.params.id, request.query),
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
    async (request) => ctx.status.ofCluster(request.params.name, request.query),
  );
}
