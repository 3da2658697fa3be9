/**
 * Whether the hub can hear NATS, checked continuously by a round trip to the server. The rollout
 * scheduler reads it: a hub that cannot hear NATS receives no status and no heartbeat, so it can
 * neither tell a healthy cluster from a silent one nor start anything it could watch. A frozen
 * server keeps the client's connection open and "connected", so only an answered PING counts.
 */
import type { Logger } from 'pino';
import type { Probe } from './probe.js';

export interface HearingState {
  hearing: boolean;
  /** Since when (epoch ms) the state holds. */
  since: number;
}

export interface NatsHearing {
  start(): void;
  stop(): void;
  state(): HearingState;
}

export function createNatsHearing(deps: {
  probe: Probe;
  intervalMs: number;
  logger: Logger;
  now?: () => number;
}): NatsHearing {
  const now = deps.now ?? Date.now;
  let state: HearingState = { hearing: true, since: now() };
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;

  async function check(): Promise<void> {
    const ok = await deps.probe();
    if (ok === state.hearing) return;
    state = { hearing: ok, since: now() };
    if (ok) deps.logger.info('NATS answers again');
    else deps.logger.warn('NATS does not answer a round trip; rollouts hold until it does');
  }

  const loop = (): void => {
    if (stopped) return;
    void check().finally(() => {
      if (!stopped) timer = setTimeout(loop, deps.intervalMs);
    });
  };

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      loop();
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
    state: () => state,
  };
}
