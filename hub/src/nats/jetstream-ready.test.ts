import { describe, expect, it } from 'vitest';
import { isJetStreamNotReady, whenJetStreamReady } from './jetstream-ready.js';

const quiet = { warn: () => undefined };

describe('whenJetStreamReady', () => {
  it('retries while JetStream is not ready and returns the first success', async () => {
    const errors = [
      new Error('JetStream not enabled for account'),
      Object.assign(new Error('timeout'), { name: 'TimeoutError' }),
    ];
    let calls = 0;
    const warned: unknown[] = [];
    const value = await whenJetStreamReady(
      () => {
        calls++;
        const err = errors.shift();
        return err ? Promise.reject(err) : Promise.resolve('ready');
      },
      { deadlineMs: 5000, initialDelayMs: 1, logger: { warn: (o: unknown) => void warned.push(o) } },
    );
    expect(value).toBe('ready');
    expect(calls).toBe(3);
    expect(warned).toHaveLength(2);
  });

  it('fails at once on an error that is not a wait', async () => {
    let calls = 0;
    await expect(
      whenJetStreamReady(
        () => {
          calls++;
          return Promise.reject(new Error('Permissions Violation for Publish to "$JS.API.STREAM.CREATE.DESIRED"'));
        },
        { deadlineMs: 5000, initialDelayMs: 1, logger: quiet },
      ),
    ).rejects.toThrow(/Permissions Violation/);
    expect(calls).toBe(1);
  });

  it('gives up with the last error at the deadline', async () => {
    let t = 0;
    let calls = 0;
    await expect(
      whenJetStreamReady(
        () => {
          calls++;
          t += 400;
          return Promise.reject(new Error('no responders available for request'));
        },
        { deadlineMs: 1000, initialDelayMs: 1, logger: quiet, now: () => t },
      ),
    ).rejects.toThrow(/no responders/);
    expect(calls).toBe(3);
  });

  it('classifies the answers of a starting cluster as waits', () => {
    expect(isJetStreamNotReady(new Error('JetStream system temporarily unavailable'))).toBe(true);
    expect(isJetStreamNotReady(new Error('insufficient resources'))).toBe(true);
    expect(isJetStreamNotReady(new Error('stream name already in use with a different configuration'))).toBe(false);
  });
});
