/** /api/v1/workloads — CRUD of workload templates and their immutable revisions. */
import {
  CreateWorkloadRequest,
  ErrorResponse,
  PageQuery,
  UpdateWorkloadRequest,
  Workload,
  WorkloadIdParams,
  WorkloadList,
  WorkloadListQuery,
  WorkloadRevision,
  WorkloadRevisionList,
  WorkloadRevisionParams,
} from '@flotilla/api';
import { Type } from 'typebox';
import { decodeContinue, pageSize, toPage } from '../domain/pagination.js';
import { notFound } from '../errors.js';
import { principalOf } from '../plugins/auth.js';
import {
  getLiveWorkload,
  getRevision,
  listRevisions,
  listWorkloads,
  toApiRevision,
  toApiWorkload,
} from '../repositories/workloads-repo.js';
import type { Api, RouteContext } from './context.js';
import { changeErrorResponses } from './responses.js';

const errors = { ...changeErrorResponses, 413: ErrorResponse };
const tags = ['workloads'];

export function workloadRoutes(api: Api, ctx: RouteContext): void {
  api.post(
    '/workloads',
    {
      onRequest: ctx.auth('operator'),
      schema: { tags, body: CreateWorkloadRequest, response: { 201: Workload, ...errors } },
    },
    async (request, reply) => reply.status(201).send(await ctx.workloads.create(principalOf(request), request.body)),
  );

  api.put(
    '/workloads/:id',
    {
      onRequest: ctx.auth('operator'),
      schema: { tags, params: WorkloadIdParams, body: UpdateWorkloadRequest, response: { 200: Workload, ...errors } },
    },
    async (request) => ctx.workloads.update(principalOf(request), request.params.id, request.body),
  );

  api.delete(
    '/workloads/:id',
    {
      onRequest: ctx.auth('operator'),
      schema: { tags, params: WorkloadIdParams, response: { 204: Type.Null(), ...errors } },
    },
    async (request, reply) => {
      await ctx.workloads.remove(principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  api.get(
    '/workloads',
    {
      onRequest: ctx.auth('viewer'),
      schema: { tags, querystring: WorkloadListQuery, response: { 200: WorkloadList, ...errors } },
    },
    async (request) => {
      const q = request.query;
      const limit = pageSize(q.limit);
      const after = decodeContinue(q.continue, ['string', 'string', 'string']);
      const rows = await listWorkloads(ctx.db, {
        ...(q.kind ? { kind: q.kind } : {}),
        ...(q.namespace !== undefined ? { namespace: q.namespace } : {}),
        ...(after ? { after } : {}),
        limit,
      });
      const page = toPage(rows, limit, (r) => [r.workload.kind, r.workload.namespace, r.workload.name]);
      return { ...page, items: page.items.map((r) => toApiWorkload(r.workload, r.revision)) };
    },
  );

  api.get(
    '/workloads/:id',
    {
      onRequest: ctx.auth('viewer'),
      schema: { tags, params: WorkloadIdParams, response: { 200: Workload, ...errors } },
    },
    async (request) => {
      const w = await getLiveWorkload(ctx.db, request.params.id);
      const r = w && (await getRevision(ctx.db, w.id, w.currentRevision));
      if (!w || !r) throw notFound(`workload ${request.params.id}`);
      return toApiWorkload(w, r);
    },
  );

  api.get(
    '/workloads/:id/revisions',
    {
      onRequest: ctx.auth('viewer'),
      schema: {
        tags,
        params: WorkloadIdParams,
        querystring: PageQuery,
        response: { 200: WorkloadRevisionList, ...errors },
      },
    },
    async (request) => {
      const w = await getLiveWorkload(ctx.db, request.params.id);
      if (!w) throw notFound(`workload ${request.params.id}`);
      const limit = pageSize(request.query.limit);
      const before = decodeContinue(request.query.continue, ['int32']);
      const rows = await listRevisions(ctx.db, w.id, limit, before?.[0]);
      const page = toPage(rows, limit, (r) => [r.revision]);
      return { ...page, items: page.items.map(toApiRevision) };
    },
  );

  api.get(
    '/workloads/:id/revisions/:revision',
    {
      onRequest: ctx.auth('viewer'),
      schema: { tags, params: WorkloadRevisionParams, response: { 200: WorkloadRevision, ...errors } },
    },
    async (request) => {
      const { id, revision } = request.params;
      const r = await getRevision(ctx.db, id, revision);
      if (!r) throw notFound(`revision ${revision} of workload ${id}`);
      return toApiRevision(r);
    },
  );
}
