/**
 * GET /api/v1/rollouts/:id/events: server-sent events, the history first, then live events
 * until the rollout finishes (or `follow=false`: the history only). The stream polls the events
 * every second and wakes at once when this process changed the rollout (the notifier); changes
 * committed by another hub replica arrive with the poll. A comment line keeps idle connections
 * open through proxies. Each open stream counts against the token's and the hub's stream limits
 * until it ends, however it ends.
 */
import { RolloutIdParams, sleep } from '@flotilla/api';
import type { ServerResponse } from 'node:http';
import { Type } from 'typebox';
import { isTerminalPhase } from '../domain/rollouts/types.js';
import { invalid } from '../errors.js';
import { principalOf } from '../plugins/auth.js';
import type { RolloutService } from '../services/rollouts/rollout-service.js';
import type { Api, RouteContext } from './context.js';

const STREAM_POLL_MS = 1000;
const KEEPALIVE_MS = 15_000;
/** Events written per read; a longer history is read in several. */
const EVENTS_PER_READ = 1000;

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

/** One open stream: what it has sent, and how to wait for the next change. */
interface EventStream {
  raw: ServerResponse;
  id: string;
  last: number;
  lastWrite: number;
  closed: boolean;
  wake: (() => void) | undefined;
}

/** Writes every event after the last one sent. */
async function writeNewEvents(rollouts: RolloutService, s: EventStream): Promise<void> {
  for (;;) {
    const events = await rollouts.eventsAfter(s.id, s.last, EVENTS_PER_READ);
    for (const e of events) {
      s.raw.write(`id: ${e.id}\nevent: rollout\ndata: ${JSON.stringify(e)}\n\n`);
      s.last = Number(e.id);
      s.lastWrite = Date.now();
    }
    if (events.length < EVENTS_PER_READ) return;
  }
}

/** Waits for the poll interval, or less when the notifier or the client's going away wakes it. */
function nextPoll(s: EventStream): Promise<void> {
  const woken = new AbortController();
  s.wake = () => woken.abort();
  return sleep(STREAM_POLL_MS, { signal: woken.signal });
}

/** Streams until the rollout is over (or gone), the client leaves, or `follow` is off. */
async function stream(rollouts: RolloutService, s: EventStream, follow: boolean): Promise<void> {
  while (!s.closed) {
    const phase = await rollouts.phaseOf(s.id);
    await writeNewEvents(rollouts, s);
    if (!follow || phase === undefined || isTerminalPhase(phase)) return;
    if (Date.now() - s.lastWrite >= KEEPALIVE_MS) {
      s.raw.write(': keepalive\n\n');
      s.lastWrite = Date.now();
    }
    await nextPoll(s);
    s.wake = undefined;
  }
}

export function rolloutEventRoutes(api: Api, ctx: RouteContext): void {
  api.get(
    '/rollouts/:id/events',
    {
      onRequest: ctx.auth('viewer'),
      schema: {
        tags: ['rollouts'],
        params: RolloutIdParams,
        querystring: Type.Object({ follow: Type.Optional(Type.Boolean({ default: true })) }),
        description: 'Server-sent events: the history, then live events until the rollout finishes.',
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      await ctx.rollouts.get(id); // 404 before the stream opens
      const s: EventStream = {
        raw: reply.raw,
        id,
        last: lastEventId(request.headers['last-event-id']),
        lastWrite: Date.now(),
        closed: false,
        wake: undefined,
      };
      // Released when the stream ends, however it ends (release is idempotent).
      const release = ctx.streams.open(principalOf(request).tokenId);
      reply.hijack();
      s.raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      const unsubscribe = ctx.rolloutNotifier.subscribe(id, () => s.wake?.());
      s.raw.on('close', () => {
        release();
        s.closed = true;
        s.wake?.();
      });
      try {
        await stream(ctx.rollouts, s, request.query.follow !== false);
      } catch (err) {
        request.log.warn({ err, rollout: id }, 'rollout event stream failed');
      } finally {
        release();
        unsubscribe();
        if (!s.closed) s.raw.end();
      }
    },
  );
}
