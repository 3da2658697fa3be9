import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSseParser } from './public/sse.js';

const STREAM =
  ': keepalive\r\n\r\n' +
  'id: 7\nevent: rollout\ndata: {"a":1}\n\n' +
  'data: line one\ndata:line two\n\n' +
  'id: 9\r\nevent: rollout\r\ndata: x\r\n\r\n' +
  'event: empty\n\n' +
  'data: unfinished';

const EXPECTED = [
  { id: '7', event: 'rollout', data: '{"a":1}' },
  { id: '7', event: 'message', data: 'line one\nline two' },
  { id: '9', event: 'rollout', data: 'x' },
];

describe('createSseParser', () => {
  it('reads ids, event names and multi-line data; skips comments and events without data', () => {
    expect(createSseParser()(STREAM)).toEqual(EXPECTED);
  });

  it('gives the same events however the stream is cut into chunks', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: STREAM.length }), { maxLength: 12 }), (cuts) => {
        const points = [0, ...[...new Set(cuts)].sort((a, b) => a - b), STREAM.length];
        const parse = createSseParser();
        const events = points.slice(1).flatMap((end, i) => parse(STREAM.slice(points[i], end)));
        expect(events).toEqual(EXPECTED);
      }),
    );
  });
});
