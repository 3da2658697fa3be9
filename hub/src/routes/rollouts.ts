/**
 * /api/v1 rollouts: start one for a workload, read its status, control it, roll it back, and
 * follow its events as server-sent events (history first, then live until it finishes).
 */
import {
  CreateRolloutRequest,
  PageQuery,
  Rollout,
  RolloutControlParams,
  type RolloutControlRequest,
  RolloutIdParams,
  RolloutList,
  WorkloadIdParams,
} from '@flotilla/api';
import { Type } from 'typebox';
import { decodeContinue, pageSize, toPage } from '../domain/pagination.js';
import { invalid, notFound } from '../errors.js';
import { principalOf } from '../plugins/auth.js';
import {
  eventsAfter,
  getRollout,
  listRolloutsOf,
  toApiRollout,
  toApiRolloutEvent,
} from '../repositories/rollouts-repo.js';
import { getLiveWorkload } from '../repositories/workloads-repo.js';
import { isTerminalPhase } from '../domain/rollouts/types.js';
import type { Api, RouteContext } from './context.js';
import { changeErrorResponses } from './responses.js';

const errors = changeErrorResponses;
const tags = ['rollouts'];
const STREAM_POLL_MS = 1000;
const KEEPALIVE_MS = 15_000;

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

/** Event ids are bigserials: a Last-Event-ID that is not one is a 400, not a failing query. */
function lastEventId(header: string | string[] | undefined): number {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined || raw === '') return 0;
  const id = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id)) {
    throw invalid('the request is invalid', [{ path: 'headers.last-event-id', message: 'must be an event id' }]);
  }
  return id;
}

export function rolloutRoutes(api: Api, ctx: RouteContext): void {
  api.post(
    '/workloads/:id/rollouts',
    {
      onRequest: ctx.auth('operator'),
      schema: { tags, params: WorkloadIdParams, body: CreateRolloutRequest, response: { 201: Rollout, ...errors } },
    },
    async (request, reply) =>
      reply.status(201).send(await ctx.rollouts.create(principalOf(request), request.params.id, request.body)),
  );

  api.get(
    '/workloads/:id/rollouts',
    {
      onRequest: ctx.auth('viewer'),
      schema: { tags, params: WorkloadIdParams, querystring: PageQuery, response: { 200: RolloutList, ...errors } },
    },
    async (request) => {
      const w = await getLiveWorkload(ctx.db, request.params.id);
      if (!w) throw notFound(`workload ${request.params.id}`);
      const limit = pageSize(request.query.limit);
      const before = decodeContinue(request.query.continue, ['timestamp', 'uuid']);
      const rows = await listRolloutsOf(ctx.db, w.id, limit, before);
      const page = toPage(rows, limit, (r) => [r.createdAt.toISOString(), r.id]);
      return { ...page, items: page.items.map(toApiRollout) };
    },
  );

  api.get(
    '/rollouts/:id',
    {
      onRequest: ctx.auth('viewer'),
      schema: { tags, params: RolloutIdParams, response: { 200: Rollout, ...errors } },
    },
    async (request) => {
      const row = await getRollout(ctx.db, request.params.id);
      if (!row) throw notFound(`rollout ${request.params.id}`);
      return toApiRollout(row);
    },
  );

  api.post(
    '/rollouts/:id/rollback',
    {
      onRequest: ctx.auth('operator'),
      schema: { tags, params: RolloutIdParams, response: { 201: Rollout, ...errors } },
    },
    async (request, reply) =>
      reply.status(201).send(await ctx.rollouts.rollback(principalOf(request), request.params.id)),
  );

  api.post(
    '/rollouts/:id/:control',
    {
      onRequest: ctx.auth('operator'),
      // The body is optional (RolloutControlRequest); fastify cannot validate an absent body, so it is checked here.
      schema: { tags, params: RolloutControlParams, response: { 200: Rollout, ...errors } },
    },
    async (request) =>
      ctx.rollouts.control(principalOf(request), request.params.id, request.params.control, controlBody(request.body)),
  );

  api.get(
    '/rollouts/:id/events',
    {
      onRequest: ctx.auth('viewer'),
      schema: {
        tags,
        params: RolloutIdParams,
        querystring: Type.Object({ follow: Type.Optional(Type.Boolean({ default: true })) }),
        description: 'Server-sent events: the history, then live events until the rollout finishes.',
      },
    },
    async (request, reply) => {
      const id = request.params.id;
      const first = await getRollout(ctx.db, id);
      if (!first) throw notFound(`rollout ${id}`);
      let last = lastEventId(request.headers['last-event-id']);
      const follow = request.query.follow !== false;
      // Released when the stream ends, however it ends (release is idempotent).
      const release = ctx.streams.open(principalOf(request).tokenId);
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      let closed = false;
      let wake: (() => void) | undefined;
      const unsubscribe = ctx.rolloutNotifier.subscribe(id, () => wake?.());
      raw.on('close', () => {
        release();
        closed = true;
        wake?.();
      });
      let lastWrite = Date.now();
      try {
        while (!closed) {
          const phase = (await getRollout(ctx.db, id))?.state.phase;
          for (;;) {
            const rows = await eventsAfter(ctx.db, id, last);
            for (const e of rows) {
              raw.write(`id: ${e.id}\nevent: rollout\ndata: ${JSON.stringify(toApiRolloutEvent(e))}\n\n`);
              last = e.id;
              lastWrite = Date.now();
            }
            if (rows.length < 1000) break;
          }
          if (!follow || phase === undefined || isTerminalPhase(phase)) break;
          if (Date.now() - lastWrite >= KEEPALIVE_MS) {
            raw.write(': keepalive\n\n');
            lastWrite = Date.now();
          }
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, STREAM_POLL_MS);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
        }
      } catch (err) {
        request.log.warn({ err, rollout: id }, 'rollout event stream failed');
      } finally {
        release();
        unsubscribe();
        if (!closed) raw.end();
      }
    },
  );
}
