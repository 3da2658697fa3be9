/**
 * /api/v1/policies/workloads — the workload admission policy and its exceptions. Anyone with a
 * viewer token may read them; only admins change exceptions (audited).
 */
import {
  PolicyException,
  PolicyExceptionList,
  PolicyExceptionNameParams,
  PutPolicyExceptionRequest,
  WorkloadPolicy,
} from '@flotilla/api';
import { Type } from 'typebox';
import { principalOf } from '../plugins/auth.js';
import type { Api, RouteContext } from './context.js';
import { errorResponses } from './responses.js';

const errors = errorResponses;
const tags = ['policies'];
const BASE = '/policies/workloads';
const params = PolicyExceptionNameParams;

export function policyRoutes(api: Api, ctx: RouteContext): void {
  api.get(BASE, { onRequest: ctx.auth('viewer'), schema: { tags, response: { 200: WorkloadPolicy, ...errors } } }, () =>
    ctx.policies.policy(),
  );

  api.get(
    `${BASE}/exceptions`,
    { onRequest: ctx.auth('viewer'), schema: { tags, response: { 200: PolicyExceptionList, ...errors } } },
    async () => ctx.policies.exceptions(),
  );

  api.get(
    `${BASE}/exceptions/:name`,
    { onRequest: ctx.auth('viewer'), schema: { tags, params, response: { 200: PolicyException, ...errors } } },
    async (request) => ctx.policies.exception(request.params.name),
  );

  api.put(
    `${BASE}/exceptions/:name`,
    {
      onRequest: ctx.auth('admin'),
      schema: {
        tags,
        params,
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
    { onRequest: ctx.auth('admin'), schema: { tags, params, response: { 204: Type.Null(), ...errors } } },
    async (request, reply) => {
      await ctx.policies.remove(principalOf(request), request.params.name);
      return reply.status(204).send(null);
    },
  );
}
