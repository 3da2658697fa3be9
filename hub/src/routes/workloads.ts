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
import { principalOf } from '../plugins/auth.js';
import type { Api, RouteContext } from './context.js';
import { changeErrorResponses } from './responses.js';

const errors = { ...changeErrorResponses, 413: ErrorResponse };
const tags = ['workloads'];
const params = WorkloadIdParams;

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
      schema: { tags, params, body: UpdateWorkloadRequest, response: { 200: Workload, ...errors } },
    },
    async (request) => ctx.workloads.update(principalOf(request), request.params.id, request.body),
  );

  api.delete(
    '/workloads/:id',
    { onRequest: ctx.auth('operator'), schema: { tags, params, response: { 204: Type.Null(), ...errors } } },
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
    async (request) => ctx.workloads.list(request.query),
  );

  api.get(
    '/workloads/:id',
    { onRequest: ctx.auth('viewer'), schema: { tags, params, response: { 200: Workload, ...errors } } },
    async (request) => ctx.workloads.get(request.params.id),
  );
}

export function revisionRoutes(api: Api, ctx: RouteContext): void {
  api.get(
    '/workloads/:id/revisions',
    {
      onRequest: ctx.auth('viewer'),
      schema: { tags, params, querystring: PageQuery, response: { 200: WorkloadRevisionList, ...errors } },
    },
    async (request) => ctx.workloads.revisions(request.params.id, request.query),
  );

  api.get(
    '/workloads/:id/revisions/:revision',
    {
      onRequest: ctx.auth('viewer'),
      schema: { tags, params: WorkloadRevisionParams, response: { 200: WorkloadRevision, ...errors } },
    },
    async (request) => ctx.workloads.revision(request.params.id, request.params.revision),
  );
}
