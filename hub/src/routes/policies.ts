/**
 * /api/v1/policies/workloads — the workload admission policy and its exceptions. Anyone with a
 * viewer token may read them; only admins change exceptions (audited).
 */
import {
  PolicyException,
  PolicyExceptionList,
  PolicyExceptionNameParams,
  PutPolicyExceptionRequest,
  WORKLOAD_POLICY_CONTROLS,
  WorkloadPolicy,
} from '@flotilla/api';
import { Type } from 'typebox';
import { notFound } from '../errors.js';
import { principalOf } from '../plugins/auth.js';
import { getException, listExceptions, toApiException } from '../repositories/policy-repo.js';
import type { Api, RouteContext } from './context.js';
import { errorResponses } from './responses.js';

const errors = errorResponses;
const tags = ['policies'];
const BASE = '/policies/workloads';

export function policyRoutes(api: Api, ctx: RouteContext): void {
  api.get(
    BASE,
    { onRequest: ctx.auth('viewer'), schema: { tags, response: { 200: WorkloadPolicy, ...errors } } },
    () => ({
      level: 'baseline' as const,
      systemNamespaces: ctx.systemNamespaces,
      controls: [...WORKLOAD_POLICY_CONTROLS],
    }),
  );

  api.get(
    `${BASE}/exceptions`,
    { onRequest: ctx.auth('viewer'), schema: { tags, response: { 200: PolicyExceptionList, ...errors } } },
    async () => ({ items: (await listExceptions(ctx.db)).map(toApiException) }),
  );

  api.get(
    `${BASE}/exceptions/:name`,
    {
      onRequest: ctx.auth('viewer'),
      schema: { tags, params: PolicyExceptionNameParams, response: { 200: PolicyException, ...errors } },
    },
    async (request) => {
      const row = await getException(ctx.db, request.params.name);
      if (!row) throw notFound(`policy exception ${request.params.name}`);
      return toApiException(row);
    },
  );

  api.put(
    `${BASE}/exceptions/:name`,
    {
      onRequest: ctx.auth('admin'),
      schema: {
        tags,
        params: PolicyExceptionNameParams,
        body: PutPolicyExceptionRequest,
        response: { 200: PolicyException, 201: PolicyException, ...errors },
      },
    },
    async (request, reply) => {
      const { exception, created } = await ctx.policies.put(principalOf(request), request.params.name, request.body);
      return reply.status(created ? 201 : 200).send(exception);
    },
  );

  api.delete(
    `${BASE}/exceptions/:name`,
    {
      onRequest: ctx.auth('admin'),
      schema: { tags, params: PolicyExceptionNameParams, response: { 204: Type.Null(), ...errors } },
    },
    async (request, reply) => {
      await ctx.policies.remove(principalOf(request), request.params.name);
      return reply.status(204).send(null);
    },
  );
}
