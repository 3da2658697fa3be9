import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../errors.js';
import { EventRecorder, type CoreEvent, type EventSink } from './events.js';
import { FakeClock } from './testing/fake-clock.js';

const silent = pino({ level: 'silent' });

class MemorySink implements EventSink {
  events = new Map<string, CoreEvent>();
  calls: string[] = [];
  failCreates = 0;
  create(namespace: string, event: CoreEvent): Promise<unknown> {
    this.calls.push(`create ${namespace}/${event.reason}`);
    if (this.failCreates > 0) {
      this.failCreates--;
      return Promise.reject(new KubeApiError(500, 'boom'));
    }
    this.events.set(`${namespace}/${event.metadata!.name}`, structuredClone(event));
    return Promise.resolve(event);
  }
  patch(namespace: string, name: string, patch: Pick<CoreEvent, 'count' | 'lastTimestamp'>): Promise<unknown> {
    this.calls.push(`patch ${namespace}/${name} count=${patch.count}`);
    const e = this.events.get(`${namespace}/${name}`);
    if (!e) return Promise.reject(new KubeApiError(404, 'NotFound'));
    Object.assign(e, patch);
    return Promise.resolve(e);
  }
}

const cloneSet = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'web', namespace: 'ns', uid: 'u1', resourceVersion: '9' },
};

function recorder(options: { burst?: number; maxPending?: number } = {}) {
  const sink = new MemorySink();
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const rec = new EventRecorder({
    sink,
    component: 'flotilla-agent/cloneset',
    instance: 'agent-0',
    logger: silent,
    clock,
    ...options,
  });
  return { sink, clock, rec };
}

describe('EventRecorder', () => {
  it('writes a core/v1 Event that references the object', async () => {
    const { sink, rec } = recorder();
    rec.event(cloneSet, 'Normal', 'SuccessfulCreate', 'created pod web-abc');
    await rec.flush();
    const [event] = [...sink.events.values()];
    expect(event).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { namespace: 'ns' },
      involvedObject: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        name: 'web',
        namespace: 'ns',
        uid: 'u1',
      },
      reason: 'SuccessfulCreate',
      message: 'created pod web-abc',
      type: 'Normal',
      count: 1,
      firstTimestamp: '2026-01-01T00:00:00Z',
      lastTimestamp: '2026-01-01T00:00:00Z',
      source: { component: 'flotilla-agent/cloneset', host: 'agent-0' },
      reportingComponent: 'flotilla-agent/cloneset',
      reportingInstance: 'agent-0',
    });
    expect(event!.metadata!.name).toMatch(/^web\.[0-9a-f]+$/);
  });

  it('aggregates repeats into one event with a count, and starts anew after the window', async () => {
    const { sink, rec, clock } = recorder();
    rec.event(cloneSet, 'Warning', 'FailedCreate', 'quota exceeded');
    clock.advance(1000);
    rec.event(cloneSet, 'Warning', 'FailedCreate', 'quota exceeded');
    rec.event(cloneSet, 'Warning', 'FailedCreate', 'quota exceeded');
    rec.event(cloneSet, 'Warning', 'FailedCreate', 'another message');
    await rec.flush();
    expect(sink.events.size).toBe(2);
    const quota = [...sink.events.values()].find((e) => e.message === 'quota exceeded')!;
    expect(quota.count).toBe(3);
    expect(quota.lastTimestamp).toBe('2026-01-01T00:00:01Z');
    clock.advance(11 * 60_000);
    rec.event(cloneSet, 'Warning', 'FailedCreate', 'quota exceeded');
    await rec.flush();
    expect(sink.events.size).toBe(3);
  });

  it('creates a new event when the aggregated one is gone', async () => {
    const { sink, rec } = recorder();
    rec.event(cloneSet, 'Normal', 'R', 'm');
    await rec.flush();
    sink.events.clear();
    rec.event(cloneSet, 'Normal', 'R', 'm');
    await rec.flush();
    expect(sink.calls.filter((c) => c.startsWith('create'))).toHaveLength(2);
    expect([...sink.events.values()][0]!.count).toBe(1);
  });

  it('rate-limits per involved object and refills over time', async () => {
    const { sink, rec, clock } = recorder({ burst: 3 });
    for (let i = 0; i < 10; i++) rec.event(cloneSet, 'Normal', 'R', `m${i}`);
    rec.event({ ...cloneSet, metadata: { ...cloneSet.metadata, name: 'other', uid: 'u2' } }, 'Normal', 'R', 'x');
    await rec.flush();
    expect(sink.events.size).toBe(4);
    clock.advance(5 * 60_000);
    rec.event(cloneSet, 'Normal', 'R', 'later');
    await rec.flush();
    expect(sink.events.size).toBe(5);
  });

  it('never throws into the caller: failed writes are logged, later events still go out', async () => {
    const { sink, rec } = recorder();
    sink.failCreates = 1;
    expect(() => rec.event(cloneSet, 'Normal', 'A', 'x')).not.toThrow();
    expect(() => rec.event(null as never, 'Normal', 'B', 'x')).not.toThrow();
    rec.event(cloneSet, 'Normal', 'C', 'y');
    await rec.flush();
    expect([...sink.events.values()].map((e) => e.reason)).toEqual(['C']);
  });

  it('bounds events waiting to be written', async () => {
    const { sink, rec } = recorder({ maxPending: 2, burst: 100 });
    for (let i = 0; i < 5; i++) rec.event(cloneSet, 'Normal', 'R', `m${i}`);
    await rec.flush();
    expect(sink.events.size).toBe(2);
  });

  it('puts events about cluster-scoped objects into default and truncates long messages', async () => {
    const { sink, rec } = recorder();
    rec.event({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', uid: 'n' } }, 'Normal', 'R', 'x'.repeat(5000));
    await rec.flush();
    const [event] = [...sink.events.values()];
    expect(event!.metadata!.namespace).toBe('default');
    expect(event!.message).toHaveLength(1024);
  });
});
