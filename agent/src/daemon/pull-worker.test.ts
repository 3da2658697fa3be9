import type { ImageTagSpec, ImageTagStatus } from '@flotilla/api';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../runtime/testing/fake-clock.js';
import { FakeImageService } from './cri/fake-image-service.js';
import { CriError } from '../errors.js';
import { attemptTimeoutMs, pullLimits, retryDelayMs } from './pull-policy.js';
import { runPull, type PullTask } from './pull-worker.js';

const REG = '127.0.0.1:5000';
const log = pino({ level: 'silent' });

function task(tag: Partial<ImageTagSpec> = {}, extra: Partial<PullTask> = {}): PullTask {
  return { name: `${REG}/app`, tag: { tag: 'v1', version: 3, ...tag }, auths: [], authProblems: [], ...extra };
}

/** Runs the pull to its end, advancing fake time a second at a time; returns what it reported. */
async function pull(
  t: PullTask,
  images: FakeImageService,
  clock = new FakeClock(),
  signal = new AbortController().signal,
) {
  const reported: ImageTagStatus[] = [];
  const startedAt = clock.now();
  let settled = false;
  const done = runPull(t, { images, clock, log, onStatus: (s) => reported.push(s) }, signal).finally(() => {
    settled = true;
  });
  for (let i = 0; i < 600 && !settled; i++) await clock.tick(1000);
  return { final: await done, reported, elapsedMs: clock.now() - startedAt };
}

describe('pull policy', () => {
  it('defaults to 600 s per attempt and 3 retries, and ignores nonsense', () => {
    expect(pullLimits({ tag: 'x' }, 0)).toEqual({ timeoutMs: 600_000, attempts: 4, deadlineMs: undefined });
    expect(pullLimits({ tag: 'x', pullPolicy: { timeoutSeconds: -5, backoffLimit: -1 } }, 0)).toMatchObject({
      timeoutMs: 600_000,
      attempts: 4,
    });
    expect(
      pullLimits({ tag: 'x', pullPolicy: { timeoutSeconds: 5, backoffLimit: 0, activeDeadlineSeconds: 60 } }, 1000),
    ).toEqual({
      timeoutMs: 5000,
      attempts: 1,
      deadlineMs: 61_000,
    });
  });

  it('backs off 1 s doubling to a 30 s cap, and shortens the last attempt to the deadline', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map(retryDelayMs)).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    const limits = { timeoutMs: 10_000, attempts: 3, deadlineMs: 15_000 };
    expect(attemptTimeoutMs(limits, 0)).toBe(10_000);
    expect(attemptTimeoutMs(limits, 9000)).toBe(6000);
    expect(attemptTimeoutMs(limits, 15_000)).toBeUndefined();
  });
});

describe('runPull', () => {
  it('reports Pulling, then Succeeded with the runtime image id', async () => {
    const images = new FakeImageService();
    images.publish(`${REG}/app:v1`, 'sha256:aaa');
    const { final, reported } = await pull(task(), images);
    expect(reported.map((s) => s.phase)).toEqual(['Pulling', 'Succeeded']);
    expect(final).toMatchObject({
      tag: 'v1',
      version: 3,
      phase: 'Succeeded',
      progress: 100,
      imageID: `${REG}/app@sha256:aaa`,
    });
    expect(final?.completionTime).toBeDefined();
    expect(images.pulls).toHaveLength(1);
  });

  it('skips the pull for IfNotPresent when the image is there, and pulls again for Always', async () => {
    const images = new FakeImageService();
    images.preload(`${REG}/app:v1`, 'sha256:old');
    images.publish(`${REG}/app:v1`, 'sha256:new');
    const present = await pull(task({ imagePullPolicy: 'IfNotPresent' }), images);
    expect(present.final).toMatchObject({ phase: 'Succeeded', imageID: `${REG}/app@sha256:old` });
    expect(images.pulls).toHaveLength(0);
    const always = await pull(task({ imagePullPolicy: 'Always' }), images);
    expect(always.final).toMatchObject({ phase: 'Succeeded', imageID: `${REG}/app@sha256:new` });
    expect(images.pulls).toHaveLength(1);
  });

  it('retries with exponential backoff and fails with the last error after backoffLimit retries', async () => {
    const images = new FakeImageService();
    const { final, reported, elapsedMs } = await pull(task({ pullPolicy: { backoffLimit: 2 } }), images);
    expect(images.pulls).toHaveLength(3);
    expect(elapsedMs).toBe(3000); // 1 s + 2 s between the three attempts
    expect(reported.map((s) => s.phase)).toEqual(['Pulling', 'Failed']);
    expect(final?.message).toBe(
      `failed to pull image "${REG}/app:v1" after 3 attempts: NotFound: ${REG}/app:v1: not found`,
    );
  });

  it('recovers when a retry succeeds', async () => {
    const images = new FakeImageService();
    images.publish(`${REG}/app:v1`, 'sha256:aaa');
    images.failNext(new CriError('DAEMON_ERR_CRI_CALL', 'Unavailable: connection reset', 14));
    const { final } = await pull(task(), images);
    expect(final?.phase).toBe('Succeeded');
    expect(images.pulls).toHaveLength(2);
  });

  it('passes credentials in turn and names secrets that could not help', async () => {
    const images = new FakeImageService();
    images.publish(`${REG}/app:v1`, 'sha256:aaa');
    images.requireAuth(REG, 'alice', 'right');
    const auths = [
      { username: 'alice', password: 'wrong' },
      { username: 'alice', password: 'right' },
    ];
    expect((await pull(task({}, { auths }), images)).final?.phase).toBe('Succeeded');
    expect(images.pulls.map((p) => p.username)).toEqual(['alice', 'alice']);

    const failed = await pull(
      task(
        { imagePullPolicy: 'Always', pullPolicy: { backoffLimit: 0 } },
        { authProblems: [{ secret: 'cfg/reg-x', reason: 'not found' }] },
      ),
      images,
    );
    expect(failed.final?.message).toContain('401 Unauthorized; pull secret cfg/reg-x: not found');
  });

  it('fails a nonsense NodeImage entry at once, naming the reference', async () => {
    const { final, reported } = await pull({ ...task(), name: 'Bad Name' }, new FakeImageService());
    expect(reported.map((s) => s.phase)).toEqual(['Pulling', 'Failed']);
    expect(final?.message).toContain('invalid image reference "Bad Name:v1"');
  });

  it('stops at activeDeadlineSeconds', async () => {
    const images = new FakeImageService();
    const { final, elapsedMs } = await pull(
      task({ pullPolicy: { backoffLimit: 10, activeDeadlineSeconds: 5 } }),
      images,
    );
    expect(final).toMatchObject({ phase: 'Failed', message: 'pulling exceeds the activeDeadlineSeconds' });
    expect(elapsedMs).toBe(5000);
  });

  it('turns a runtime timeout into a message naming the limit', async () => {
    const images = new FakeImageService();
    images.pullDelayMs = 200;
    const clock = new FakeClock();
    const reported: ImageTagStatus[] = [];
    const final = await runPull(
      task({ pullPolicy: { timeoutSeconds: 0.05, backoffLimit: 0 } }),
      { images, clock, log, onStatus: (s) => reported.push(s) },
      new AbortController().signal,
    );
    expect(final?.message).toBe(
      `failed to pull image "${REG}/app:v1" after 1 attempt: pull of ${REG}/app:v1 timed out after 0s`,
    );
  });

  it('reports nothing more once stopped', async () => {
    const images = new FakeImageService();
    images.pullDelayMs = 50;
    const abort = new AbortController();
    const reported: ImageTagStatus[] = [];
    const running = runPull(
      task(),
      { images, clock: new FakeClock(), log, onStatus: (s) => reported.push(s) },
      abort.signal,
    );
    abort.abort();
    expect(await running).toBeUndefined();
    expect(reported.map((s) => s.phase)).toEqual(['Pulling']);
  });
});
