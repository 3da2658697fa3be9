import { describe, expect, it } from 'vitest';
import { AgentError } from '../errors.js';
import type { WatchEvent } from './list-watch.js';
import { WatchDecoder } from './watch-decoder.js';

function decoder(): { d: WatchDecoder; events: WatchEvent[] } {
  const events: WatchEvent[] = [];
  return { d: new WatchDecoder((e) => events.push(e)), events };
}

const line = (event: WatchEvent): string => `${JSON.stringify(event)}\n`;

const added: WatchEvent = {
  type: 'ADDED',
  object: { kind: 'Pod', metadata: { name: 'a', resourceVersion: '1', annotations: { note: 'grüße, 日本, 🚀' } } },
};
const modified: WatchEvent = {
  type: 'MODIFIED',
  object: { kind: 'Pod', metadata: { name: 'a', resourceVersion: '2' } },
};
const bookmark: WatchEvent = { type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: '7' } } };
const gone: WatchEvent = {
  type: 'ERROR',
  object: { kind: 'Status', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version' },
};

describe('WatchDecoder', () => {
  it('delivers every line of one chunk in order', () => {
    const { d, events } = decoder();
    d.write(Buffer.from(line(added) + line(modified) + line(bookmark)));
    expect(events).toEqual([added, modified, bookmark]);
  });

  it('reassembles events cut at every possible byte, multi-byte characters included', () => {
    const bytes = Buffer.from(line(added) + line(modified));
    // The annotation's characters take 2, 3 and 4 bytes: some cuts fall inside them.
    expect(bytes.length).toBeGreaterThan(Buffer.from(line(added) + line(modified), 'latin1').length);
    for (let cut = 1; cut < bytes.length; cut++) {
      const { d, events } = decoder();
      d.write(bytes.subarray(0, cut));
      d.write(bytes.subarray(cut));
      d.end();
      expect(events, `cut at ${cut}`).toEqual([added, modified]);
    }
  });

  it('reassembles an event that arrives one byte at a time', () => {
    const { d, events } = decoder();
    const bytes = Buffer.from(line(added));
    for (let i = 0; i < bytes.length; i++) d.write(bytes.subarray(i, i + 1));
    expect(events).toEqual([added]);
  });

  it('passes ERROR events on as events (the informer turns a 410 into a relist)', () => {
    const { d, events } = decoder();
    d.write(Buffer.from(line(gone)));
    expect(events).toEqual([gone]);
  });

  it('skips blank lines and CRLF line ends', () => {
    const { d, events } = decoder();
    d.write(Buffer.from(`\n  \n${JSON.stringify(modified)}\r\n\r\n`));
    d.end();
    expect(events).toEqual([modified]);
  });

  it('delivers a last event without its newline when the body ends', () => {
    const { d, events } = decoder();
    d.write(Buffer.from(line(added) + JSON.stringify(bookmark)));
    expect(events).toEqual([added]);
    d.end();
    expect(events).toEqual([added, bookmark]);
  });

  it('rejects a truncated last event with a coded error', () => {
    const { d, events } = decoder();
    d.write(Buffer.from(line(added) + line(modified).slice(0, 20)));
    expect(() => d.end()).toThrow(AgentError);
    expect(events).toEqual([added]);
  });

  it('rejects a line that is not JSON, or JSON that is not an event, instead of dropping it', () => {
    const notJson = decoder();
    let err: unknown;
    try {
      notJson.d.write(Buffer.from('{"type":"ADDED",\n'));
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'AGENT_ERR_WATCH' });
    expect((err as Error).cause).toBeInstanceOf(SyntaxError);
    expect(() => decoder().d.write(Buffer.from('{"object":{}}\n'))).toThrow(/not an event/);
    expect(() => decoder().d.write(Buffer.from('null\n'))).toThrow(/not an event/);
  });

  it('passes on what the event handler throws, and keeps decoding the next write', () => {
    let calls = 0;
    const d = new WatchDecoder(() => {
      if (++calls === 1) throw new Error('handler failed');
    });
    expect(() => d.write(Buffer.from(line(added)))).toThrow('handler failed');
    d.write(Buffer.from(line(modified)));
    expect(calls).toBe(2);
  });
});
