/**
 * /api/v1 rollouts: start one for a workload (or preview it: dryRun), read its status, control it
 * and roll it back.
 * Its events stream from rollout-events.ts.
 */
import {
  CreateRolloutRequest,
  PageQuery,
  Rollout,
  RolloutControlParams,
  type RolloutControlRequest,
  RolloutIdParams,
  RolloutList,
  RolloutPreview,
  WorkloadIdParams,
} from '@flotilla/api';
import { invalid } from '../errors.js';
import { principalOf } from '../plugins/auth.js';
import type { Api, RouteContext } from './context.js';
import { changeErrorResponses } from './responses.js';

const errors = changeErrorResponses;
const tags = ['rollouts'];

/** The optional body of a control (fastify cannot validate an absent body, so it is checked here). */
function controlBody(body: unknown): RolloutControlRequest {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw invalid('the request is invalid', [{ path: '', message: 'must be object' }]);
  const problems: { path: string; message: string }[] = [];
  const out: RolloutControlRequest = {};
  for (const [k, v] of Object.entries(body)) {
    if ((k === 'reason' || k === 'wave') && typeof v === 'string' && v.length <= (k === 'reason' ? 1024 : 63))
      out[k] = v;
    else
      problems.push({ path: k, message: k === 'reason' || k === 'wave' ? 'must be a short string' : 'unknown field' });
  }
  if (problems.length > 0) throw invalid('the request is invalid', problems);
  return out;
}

/** The optional body of a rollback: `{ dryRun: true }` previews it (checked here, like controlBody). */
function rollbackBody(body: unknown): { dryRun: boolean } {
  if (body === undefined || body === null || body === '') return { dryRun: false };
  if (typeof body !== 'object' || Array.isArray(body))
    throw invalid('the request is invalid', [{ path: '', message: 'must be object' }]);
  const problems = Object.entries(body)
    .filter(([k, v]) => k !== 'dryRun' || typeof v !== 'boolean')
    .map(([k]) => ({ path: k, message: k === 'dryRun' ? 'must be boolean' : 'unknown field' }));
  if (problems.length > 0) throw invalid('the request is invalid', problems);
  return { dryRun: (body as { dryRun?: boolean }).dryRun === true };
}

export function rolloutRoutes(api: Api, ctx: RouteContext): void {
  api.post(
    '/workloads/:id/rollouts',
    {
      onRequest: ctx.auth('operator'),
      schema: {
        tags,
        params: WorkloadIdParams,
        body: CreateRolloutRequest,
        response: { 200: RolloutPreview, 201: Rollout, ...errors },
      },
    },
    async (request, reply) =>
      request.body.dryRun
        ? reply.status(200).send(await ctx.rollouts.preview(request.params.id, request.body))
        : reply.status(201).send(await ctx.rollouts.create(principalOf(request), request.params.id, request.body)),
  );

  api.get(
    '/workloads/:id/rollouts',
    {
      onRequest: ctx.auth('viewer'),
      schema: { tags, params: WorkloadIdParams, querystring: PageQuery, response: { 200: RolloutList, ...errors } },
    },
    async (request) => ctx.rollouts.listOf(request.params.id, request.query),
  );

  api.get(
    '/rollouts/:id',
    { onRequest: ctx.auth('viewer'), schema: { tags, params: RolloutIdParams, response: { 200: Rollout, ...errors } } },
    async (request) => ctx.rollouts.get(request.params.id),
  );

  api.post(
    '/rollouts/:id/rollback',
    {
      onRequest: ctx.auth('operator'),
      schema: { tags, params: RolloutIdParams, response: { 200: RolloutPreview, 201: Rollout, ...errors } },
    },
    async (request, reply) =>
      rollbackBody(request.body).dryRun
        ? reply.status(200).send(await ctx.rollouts.previewRollback(request.params.id))
        : reply.status(201).send(await ctx.rollouts.rollback(principalOf(request), request.params.id)),
  );

  api.post(
    '/rollouts/:id/:control',
    {
      onRequest: ctx.auth('operator'),
      schema: { tags, params: RolloutControlParams, response: { 200: Rollout, ...errors } },
    },
    async (request) =>
      ctx.rollouts.control(principalOf(request), request.params.id, request.params.control, controlBody(request.body)),
  );
}
