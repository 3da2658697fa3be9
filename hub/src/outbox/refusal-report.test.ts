import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { RefusedRow } from '../domain/outbox-plan.js';
import { createHubMetrics } from '../metrics.js';
import { createRefusalReporter } from './refusal-report.js';

function setup() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const metrics = createHubMetrics(new Registry(), false);
  let clock = 0;
  const report = createRefusalReporter({
    metrics,
    logger: pino({ level: 'info' }, sink),
    intervalMs: 30_000,
    now: () => clock,
  });
  const refused = async (): Promise<Record<string, number>> =>
    Object.fromEntries(
      (await metrics.outboxRefused.get()).values.map((v) => [String(v.labels.reason), v.value] as const),
    );
  return { lines, report, refused, advance: (ms: number) => (clock += ms) };
}

const row = (id: number, reason: RefusedRow['reason']): RefusedRow => ({
  id,
  subject: `flotilla.desired.c${id}.CloneSet.apps.web`,
  reason,
  detail: reason === 'max_payload' ? "'payload' max_payload size exceeded" : 'message size exceeds maximum allowed',
  retryMs: 1000,
});

describe('createRefusalReporter', () => {
  it('counts every refusal by reason and logs subjects and reasons, never payloads', async () => {
    const { lines, report, refused } = setup();
    report([row(1, 'message_size'), row(2, 'max_payload'), row(3, 'message_size')]);
    expect(await refused()).toEqual({ message_size: 2, max_payload: 1 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      refused: 3,
      notLoggedBefore: 0,
      messages: [
        { subject: 'flotilla.desired.c1.CloneSet.apps.web', reason: 'message_size', retryMs: 1000 },
        { subject: 'flotilla.desired.c2.CloneSet.apps.web', reason: 'max_payload' },
        { subject: 'flotilla.desired.c3.CloneSet.apps.web', reason: 'message_size' },
      ],
    });
  });

  it('logs at most one line per interval and says how many went unlogged', async () => {
    const { lines, report, refused, advance } = setup();
    report([row(1, 'stream_full')]);
    for (let i = 0; i < 50; i++) {
      advance(100);
      report([row(2, 'stream_full'), row(3, 'stream_full')]);
    }
    expect(lines).toHaveLength(1);
    expect(await refused()).toEqual({ stream_full: 101 });
    advance(30_000);
    report([row(4, 'stream_full')]);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ refused: 1, notLoggedBefore: 100 });
  });

  it('names at most ten subjects in a line', () => {
    const { lines, report } = setup();
    report(Array.from({ length: 25 }, (_, i) => row(i, 'stream_full')));
    expect(lines[0]).toMatchObject({ refused: 25 });
    expect((lines[0]!.messages as unknown[]).length).toBe(10);
  });

  it('does nothing for a batch without refusals', async () => {
    const { lines, report, refused } = setup();
    report([]);
    expect(lines).toEqual([]);
    expect(await refused()).toEqual({});
  });
});
