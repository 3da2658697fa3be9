/**
 * `rollouts watch` (and `start`/`rollback --watch`): follows a rollout's event stream until the
 * rollout reaches a terminal phase. The hub may end the stream early (a restart, a proxy's idle
 * timeout); the phase decides, so the watch then reconnects from the last event id it printed.
 */
import type { Rollout, RolloutEvent } from '@flotilla/api';
import { TERMINAL_ROLLOUT_PHASES } from '@flotilla/api/enums';
import { seg } from '../client.js';
import type { CliContext } from '../context.js';
import { readSse } from '../sse.js';
import { eventText } from './rollout-view.js';

const RECONNECT_MS = 1000;

/** Prints the `rollout` events of one connection; resolves to the last event id seen (or `lastEventId`). */
async function printEvents(ctx: CliContext, id: string, lastEventId: string): Promise<string> {
  let last = lastEventId;
  const res = await ctx.client.stream(`/rollouts/${seg(id)}/events`, { lastEventId });
  if (!res.body) return last;
  for await (const ev of readSse(res.body)) {
    if (ev.event !== 'rollout') continue;
    const event = JSON.parse(ev.data) as RolloutEvent;
    last = ev.id;
    ctx.stdout(eventText(ctx.format, event));
  }
  return last;
}

/** Exit code 0 when the rollout Succeeded, 1 when it ended any other way. */
export async function watchRollout(ctx: CliContext, id: string): Promise<number> {
  let last = '';
  for (;;) {
    last = await printEvents(ctx, id, last);
    const r = await ctx.client.request<Rollout>('GET', `/rollouts/${seg(id)}`);
    if (TERMINAL_ROLLOUT_PHASES.includes(r.phase)) {
      ctx.stderr(`rollout ${r.id} ${r.phase}${r.message ? `: ${r.message}` : ''}\n`);
      return r.phase === 'Succeeded' ? 0 : 1;
    }
    await ctx.sleep(RECONNECT_MS);
  }
}
