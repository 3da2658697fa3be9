/** /api/v1/clusters — registration, acceptance, credentials, labels, listing, removal. */
import {
  AgentCredentials,
  ClaimCredentialsRequest,
  Cluster,
  ClusterList,
  ClusterListQuery,
  ClusterNameParams,
  ErrorResponse,
  RegisterClusterRequest,
  RegisterClusterResponse,
  SetClusterLabelsRequest,
} from '@flotilla/api';
import { Type } from 'typebox';
import { parseLabelSelector } from '../domain/label-selector.js';
import { decodeContinue, pageSize, toPage } from '../domain/pagination.js';
import { invalid, notFound } from '../errors.js';
import { principalOf } from '../plugins/auth.js';
import { getCluster, listClusters, toApiCluster } from '../repositories/clusters-repo.js';
import type { Api, RouteContext } from './context.js';

const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse };
const tags = ['clusters'];

/** Parses `?labelSelector=`; a syntax error is a 400 on that parameter. */
export function selectorParam(raw: string | undefined): ReturnType<typeof parseLabelSelector> | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  try {
    return parseLabelSelector(raw);
  } catch (err) {
    throw invalid('invalid label selector', [{ path: 'labelSelector', message: (err as Error).message }]);
  }
}

export function clusterRoutes(api: Api, ctx: RouteContext): void {
  api.post(
    '/clusters/register',
    {
      preHandler: ctx.auth('bootstrap'),
      schema: { tags, body: RegisterClusterRequest, response: { 201: RegisterClusterResponse, ...errors } },
    },
    async (request, reply) => reply.status(201).send(await ctx.clusters.register(principalOf(request), request.body)),
  );

  api.post(
    '/clusters/:name/claim',
    {
      preHandler: ctx.auth('bootstrap'),
      schema: {
        tags,
        params: ClusterNameParams,
        body: ClaimCredentialsRequest,
        response: { 200: AgentCredentials, ...errors },
      },
    },
    async (request) => ctx.clusters.claim(principalOf(request), request.params.name, request.body.registrationSecret),
  );

  api.post(
    '/clusters/:name/accept',
    {
      preHandler: ctx.auth('operator'),
      schema: { tags, params: ClusterNameParams, response: { 200: Cluster, ...errors } },
    },
    async (request) => ctx.clusters.accept(principalOf(request), request.params.name),
  );

  api.post(
    '/clusters/:name/credentials',
    {
      preHandler: ctx.auth('admin'),
      schema: { tags, params: ClusterNameParams, response: { 200: AgentCredentials, ...errors } },
    },
    async (request) => ctx.clusters.rotate(principalOf(request), request.params.name),
  );

  api.put(
    '/clusters/:name/labels',
    {
      preHandler: ctx.auth('operator'),
      schema: { tags, params: ClusterNameParams, body: SetClusterLabelsRequest, response: { 200: Cluster, ...errors } },
    },
    async (request) => ctx.clusters.setLabels(principalOf(request), request.params.name, request.body.labels),
  );

  api.delete(
    '/clusters/:name',
    {
      preHandler: ctx.auth('operator'),
      schema: { tags, params: ClusterNameParams, response: { 204: Type.Null(), ...errors } },
    },
    async (request, reply) => {
      await ctx.clusters.remove(principalOf(request), request.params.name);
      return reply.status(204).send(null);
    },
  );

  api.get(
    '/clusters',
    {
      preHandler: ctx.auth('viewer'),
      schema: { tags, querystring: ClusterListQuery, response: { 200: ClusterList, ...errors } },
    },
    async (request) => {
      const q = request.query;
      const limit = pageSize(q.limit);
      const after = decodeContinue(q.continue, 1);
      const now = ctx.now();
      const selector = selectorParam(q.labelSelector);
      const rows = await listClusters(ctx.db, {
        ...(selector ? { selector } : {}),
        ...(q.health ? { health: q.health } : {}),
        ...(after ? { after: String(after[0]) } : {}),
        limit,
        now,
        heartbeatTimeoutMs: ctx.heartbeatTimeoutMs,
      });
      const page = toPage(rows, limit, (r) => [r.name]);
      return { ...page, items: page.items.map((r) => toApiCluster(r, now, ctx.heartbeatTimeoutMs)) };
    },
  );

  api.get(
    '/clusters/:name',
    {
      preHandler: ctx.auth('viewer'),
      schema: { tags, params: ClusterNameParams, response: { 200: Cluster, ...errors } },
    },
    async (request) => {
      const row = await getCluster(ctx.db, request.params.name);
      if (!row) throw notFound(`cluster ${request.params.name}`);
      return toApiCluster(row, ctx.now(), ctx.heartbeatTimeoutMs);
    },
  );
}
