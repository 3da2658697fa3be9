import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readSse, sseEvents, type SseEvent } from './sse.js';

async function collect(events: AsyncIterable<SseEvent>): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

// Every line ending (CRLF, LF, lone CR), a comment, a field without a colon, an id with NUL
// (ignored), an event without data (dropped) and an unfinished event at the end (dropped).
const STREAM =
  ':hello\r\rid: r-1\revent: rollout\rdata: {"phase":"Progressing"}\r\r' +
  'data\ndata:  two spaces\n\n' +
  'id: bad\0id\r\nevent: ping\r\n\r\n' +
  'event: rollout\r\ndata: é\r\n\r\n' +
  'id: 5\ndata: unfinished';

const EXPECTED: SseEvent[] = [
  { id: 'r-1', event: 'rollout', data: '{"phase":"Progressing"}' },
  { id: 'r-1', event: 'message', data: '\n two spaces' },
  { id: 'r-1', event: 'rollout', data: 'é' },
];

describe('sseEvents', () => {
  it('reads ids, event names and data lines under every line ending', async () => {
    expect(await collect(sseEvents([STREAM]))).toEqual(EXPECTED);
  });

  it('gives the same events wherever the chunks are cut, a CRLF included', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: STREAM.length - 1 }), { maxLength: 12 }),
        async (cuts) => {
          const points = [0, ...cuts.sort((a, b) => a - b), STREAM.length];
          const parts = points.slice(1).map((end, i) => STREAM.slice(points[i], end));
          expect(await collect(sseEvents(parts))).toEqual(EXPECTED);
        },
      ),
    );
  });
});

describe('readSse', () => {
  it('decodes characters cut between chunks and ends quietly when the connection drops', async () => {
    const bytes = new TextEncoder().encode('id: 1\ndata: é\n\nid: 2\ndata: lost');
    const cut = bytes.indexOf(0xa9); // the second byte of é
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(bytes.slice(0, cut));
        else if (sent === 1) controller.enqueue(bytes.slice(cut));
        else controller.error(new Error('socket hang up'));
        sent++;
      },
    });
    expect(await collect(readSse(body))).toEqual([{ id: '1', event: 'message', data: 'é' }]);
  });
});
