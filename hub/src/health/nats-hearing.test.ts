import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { createNatsHearing } from './nats-hearing.js';

describe('createNatsHearing', () => {
  it('records since when the hub hears NATS or not, changing only when the answer changes', async () => {
    let clock = 1000;
    const waiting: ((ok: boolean) => void)[] = [];
    const hearing = createNatsHearing({
      probe: () => new Promise<boolean>((resolve) => waiting.push(resolve)),
      intervalMs: 1,
      logger: createLogger('silent'),
      now: () => clock,
    });
    /** Answers the probe in flight at `at`, then lets the monitor take it in. */
    const answer = async (ok: boolean, at: number): Promise<void> => {
      while (waiting.length === 0) await new Promise((r) => setTimeout(r, 1));
      clock = at;
      waiting.shift()!(ok);
      await new Promise((r) => setImmediate(r));
    };
    expect(hearing.state()).toEqual({ hearing: true, since: 1000 });
    hearing.start();
    await answer(true, 2000);
    expect(hearing.state()).toEqual({ hearing: true, since: 1000 });
    await answer(false, 3000);
    await answer(false, 4000);
    expect(hearing.state()).toEqual({ hearing: false, since: 3000 });
    await answer(true, 5000);
    expect(hearing.state()).toEqual({ hearing: true, since: 5000 });
    hearing.stop();
  });
});
