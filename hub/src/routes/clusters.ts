/** /api/v1/clusters — registration, acceptance, credentials, labels, listing, removal. */
import {
  AgentCredentials,
  ClaimCredentialsRequest,
  Cluster,
  ClusterList,
  ClusterListQuery,
  ClusterNameParams,
  RegisterClusterRequest,
  RegisterClusterResponse,
  SetClusterLabelsRequest,
} from '@flotilla/api';
import { Type } from 'typebox';
import { labelProblems, parseLabelSelector } from '../domain/label-selector.js';
import { decodeContinue, pageSize, toPage } from '../domain/pagination.js';
import { HubError, invalid, notFound } from '../errors.js';
import { principalOf } from '../plugins/auth.js';
import { getCluster, listClusters, toApiCluster } from '../repositories/clusters-repo.js';
import type { Api, RouteContext } from './context.js';
import { changeErrorResponses } from './responses.js';

const errors = changeErrorResponses;
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

/** Cluster labels are validated as Kubernetes validates labels; each problem names the label. */
function assertLabels(labels: Record<string, string>): void {
  const problems = labelProblems(labels, 'labels');
  if (problems.length > 0) throw invalid('invalid cluster labels', problems);
}

/**
 * A claim for an unknown, removed or expired cluster and one with the wrong secret get the same
 * answer, so a bootstrap token cannot probe which cluster names exist. Its code tells an agent
 * that its registration is gone and it should register again.
 */
function uniformClaimRefusal(err: unknown): never {
  if (err instanceof HubError && (err.code === 'HUB_ERR_NOT_FOUND' || err.code === 'HUB_ERR_FORBIDDEN')) {
    throw new HubError('HUB_ERR_REGISTRATION_REFUSED', 'no registration matches this cluster name and secret');
  }
  throw err;
}

export function clusterRoutes(api: Api, ctx: RouteContext): void {
  api.post(
    '/clusters/register',
    {
      onRequest: ctx.auth('bootstrap'),
      schema: { tags, body: RegisterClusterRequest, response: { 201: RegisterClusterResponse, ...errors } },
    },
    async (request, reply) => {
      assertLabels(request.body.labels ?? {});
      return reply.status(201).send(await ctx.clusters.register(principalOf(request), request.body));
    },
  );

  api.post(
    '/clusters/:name/claim',
    {
      onRequest: ctx.auth('bootstrap'),
      schema: {
        tags,
        params: ClusterNameParams,
        body: ClaimCredentialsRequest,
        response: { 200: AgentCredentials, ...errors },
      },
    },
    async (request) =>
      ctx.clusters
        .claim(principalOf(request), request.params.name, request.body.registrationSecret)
        .catch(uniformClaimRefusal),
  );

  api.post(
    '/clusters/:name/accept',
    {
      onRequest: ctx.auth('operator'),
      schema: { tags, params: ClusterNameParams, response: { 200: Cluster, ...errors } },
    },
    async (request) => {
      // A registration past its TTL must not be accepted: the agent registers again instead.
      await ctx.registrations.expireStale(ctx.db);
      return ctx.clusters.accept(principalOf(request), request.params.name);
    },
  );

  api.post(
    '/clusters/:name/credentials',
    {
      onRequest: ctx.auth('admin'),
      schema: { tags, params: ClusterNameParams, response: { 200: AgentCredentials, ...errors } },
    },
    async (request) => ctx.clusters.rotate(principalOf(request), request.params.name),
  );

  api.put(
    '/clusters/:name/labels',
    {
      onRequest: ctx.auth('operator'),
      schema: { tags, params: ClusterNameParams, body: SetClusterLabelsRequest, response: { 200: Cluster, ...errors } },
    },
    async (request) => {
      assertLabels(request.body.labels);
      return ctx.clusters.setLabels(principalOf(request), request.params.name, request.body.labels);
    },
  );

  api.delete(
    '/clusters/:name',
    {
      onRequest: ctx.auth('operator'),
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
      onRequest: ctx.auth('viewer'),
      schema: { tags, querystring: ClusterListQuery, response: { 200: ClusterList, ...errors } },
    },
    async (request) => {
      const q = request.query;
      const limit = pageSize(q.limit);
      const after = decodeContinue(q.continue, ['string']);
      const now = ctx.now();
      const selector = selectorParam(q.labelSelector);
      const rows = await listClusters(ctx.db, {
        ...(selector ? { selector } : {}),
        ...(q.health ? { health: q.health } : {}),
        ...(after ? { after: after[0] } : {}),
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
      onRequest: ctx.auth('viewer'),
      schema: { tags, params: ClusterNameParams, response: { 200: Cluster, ...errors } },
    },
    async (request) => {
      const row = await getCluster(ctx.db, request.params.name);
      if (!row) throw notFound(`cluster ${request.params.name}`);
      return toApiCluster(row, ctx.now(), ctx.heartbeatTimeoutMs);
    },
  );
}
