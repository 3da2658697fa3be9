/**
 * /api/v1/clusters — joining (registration, acceptance, credentials), labels, maintenance
 * windows, listing, removal.
 */
import {
  AgentCredentials,
  ClaimCredentialsRequest,
  RekeyCredentialsRequest,
  RenewCredentialsRequest,
  SIGNATURE_HEADER,
  Cluster,
  ClusterList,
  ClusterListQuery,
  ClusterNameParams,
  RegisterClusterRequest,
  RegisterClusterResponse,
  SetClusterLabelsRequest,
  SetMaintenanceWindowsRequest,
  SetPrometheusRequest,
} from '@flotilla/api';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { SignedCall } from '../services/agent-credentials.js';
import { principalOf } from '../plugins/auth.js';
import type { Api, RouteContext } from './context.js';
import { changeErrorResponses } from './responses.js';

const errors = changeErrorResponses;
const tags = ['clusters'];
const params = ClusterNameParams;
/** Renew and re-key carry no bearer token: the agent's signature (SIGNATURE_HEADER) is its credential. */
const SIGNED = [{ agentSignature: [] }];

/** What an agent's key signature must cover in this request (api: signed-request.ts). */
function signedCall(request: FastifyRequest): SignedCall {
  const header = request.headers[SIGNATURE_HEADER];
  return {
    method: request.method,
    path: request.url.split('?')[0]!,
    body: request.body,
    signature: typeof header === 'string' ? header : undefined,
  };
}

/**
 * The double opt-in: an agent registers (with its public key) and claims with a bootstrap token,
 * an operator accepts; renew and re-key are authenticated by the agent's key signature alone.
 */
export function clusterJoinRoutes(api: Api, ctx: RouteContext): void {
  api.post(
    '/clusters/register',
    {
      onRequest: ctx.auth('bootstrap'),
      schema: { tags, body: RegisterClusterRequest, response: { 201: RegisterClusterResponse, ...errors } },
    },
    async (request, reply) => reply.status(201).send(await ctx.clusters.register(principalOf(request), request.body)),
  );

  api.post(
    '/clusters/:name/claim',
    {
      onRequest: ctx.auth('bootstrap'),
      schema: { tags, params, body: ClaimCredentialsRequest, response: { 200: AgentCredentials, ...errors } },
    },
    async (request) =>
      ctx.clusters.claim(
        principalOf(request),
        request.params.name,
        request.body.registrationSecret,
        signedCall(request),
      ),
  );

  api.post(
    '/clusters/:name/credentials/renew',
    {
      onRequest: ctx.signed,
      schema: {
        tags,
        params,
        body: RenewCredentialsRequest,
        response: { 200: AgentCredentials, ...errors },
        security: SIGNED,
      },
    },
    async (request) => ctx.clusters.renew(request.params.name, signedCall(request)),
  );

  api.post(
    '/clusters/:name/credentials/rekey',
    {
      onRequest: ctx.signed,
      schema: {
        tags,
        params,
        body: RekeyCredentialsRequest,
        response: { 200: AgentCredentials, ...errors },
        security: SIGNED,
      },
    },
    async (request) => ctx.clusters.rekey(request.params.name, request.body.publicKey, signedCall(request)),
  );

  api.post(
    '/clusters/:name/accept',
    { onRequest: ctx.auth('operator'), schema: { tags, params, response: { 200: Cluster, ...errors } } },
    async (request) => ctx.clusters.accept(principalOf(request), request.params.name),
  );

  api.post(
    '/clusters/:name/credentials/revoke',
    { onRequest: ctx.auth('admin'), schema: { tags, params, response: { 200: Cluster, ...errors } } },
    async (request) => ctx.clusters.revokeKey(principalOf(request), request.params.name),
  );
}

export function clusterRoutes(api: Api, ctx: RouteContext): void {
  api.put(
    '/clusters/:name/labels',
    {
      onRequest: ctx.auth('operator'),
      schema: { tags, params, body: SetClusterLabelsRequest, response: { 200: Cluster, ...errors } },
    },
    async (request) => ctx.clusters.setLabels(principalOf(request), request.params.name, request.body.labels),
  );

  api.put(
    '/clusters/:name/maintenance-windows',
    {
      onRequest: ctx.auth('operator'),
      schema: { tags, params, body: SetMaintenanceWindowsRequest, response: { 200: Cluster, ...errors } },
    },
    async (request) =>
      ctx.clusters.setMaintenanceWindows(principalOf(request), request.params.name, request.body.windows),
  );

  api.put(
    '/clusters/:name/prometheus',
    {
      onRequest: ctx.auth('operator'),
      schema: { tags, params, body: SetPrometheusRequest, response: { 200: Cluster, ...errors } },
    },
    async (request) => ctx.clusters.setPrometheus(principalOf(request), request.params.name, request.body),
  );

  api.delete(
    '/clusters/:name',
    { onRequest: ctx.auth('operator'), schema: { tags, params, response: { 204: Type.Null(), ...errors } } },
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
    async (request) => ctx.clusters.list(request.query),
  );

  api.get(
    '/clusters/:name',
    { onRequest: ctx.auth('viewer'), schema: { tags, params, response: { 200: Cluster, ...errors } } },
    async (request) => ctx.clusters.get(request.params.name),
  );
}
