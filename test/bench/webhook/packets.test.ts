import { describe, expect, it } from 'vitest';
import { exchanges, parseTcpdump, splitCalls, type Exchange } from './packets.js';

const SERVER = 8443;
const line = (s: number, from: number, to: number, length: number): string =>
  `${s.toFixed(6)} IP 192.0.2.2.${from} > 192.0.2.2.${to}: Flags [P.], seq 1:2, ack 1, win 106, length ${length}`;

describe('parseTcpdump', () => {
  it('keeps data packets of the server port with their direction and connection', () => {
    const packets = parseTcpdump(
      [
        line(1000.001, 40000, SERVER, 302),
        line(1000.002, SERVER, 40000, 0),
        line(1000.003, SERVER, 40000, 4573),
        line(1000.004, 40001, 9999, 100),
        'reading from file x.pcap, link-type EN10MB',
      ],
      SERVER,
    );
    expect(packets).toEqual([
      { ms: 1000001, conn: 40000, toServer: true },
      { ms: 1000003, conn: 40000, toServer: false },
    ]);
  });
});

describe('exchanges', () => {
  it('pairs each run of request packets with the first answer packet, per connection', () => {
    const found = exchanges(
      parseTcpdump(
        [
          line(1.0, 40000, SERVER, 302),
          line(1.001, 40001, SERVER, 302),
          line(1.002, 40000, SERVER, 2725),
          line(1.005, SERVER, 40000, 4000),
          line(1.006, SERVER, 40000, 573),
          line(1.009, SERVER, 40001, 4573),
        ],
        SERVER,
      ),
    );
    expect(found.map((x) => [x.conn, x.requestFirstMs, x.requestLastMs, x.answerFirstMs])).toEqual([
      [40000, 1000, 1002, 1005],
      [40001, 1001, 1001, 1009],
    ]);
  });

  it('skips what the server sends before any request (a session ticket)', () => {
    const found = exchanges(
      parseTcpdump(
        [line(1.0, SERVER, 40000, 90), line(1.001, 40000, SERVER, 300), line(1.003, SERVER, 40000, 400)],
        SERVER,
      ),
    );
    expect(found).toEqual([{ conn: 40000, requestFirstMs: 1001, requestLastMs: 1001, answerFirstMs: 1003 }]);
  });
});

describe('splitCalls', () => {
  const x = (requestFirstMs: number, requestLastMs: number, answerFirstMs: number, conn = 1): Exchange => ({
    conn,
    requestFirstMs,
    requestLastMs,
    answerFirstMs,
  });

  it('splits each span at the packets of the exchange inside it', () => {
    expect(splitCalls([{ startMs: 100, endMs: 110 }], [x(101, 102, 107)])).toEqual([
      { sendMs: 1, agentMs: 5, receiveMs: 3 },
    ]);
  });

  it('gives overlapping spans one exchange each, and none to a span whose packets were not captured', () => {
    const parts = splitCalls(
      [
        { startMs: 100, endMs: 130 },
        { startMs: 102, endMs: 108 },
        { startMs: 200, endMs: 205 },
      ],
      [x(101, 101, 125, 1), x(103, 103, 106, 2)],
    );
    expect(parts).toEqual([
      { sendMs: 1, agentMs: 24, receiveMs: 5 },
      { sendMs: 1, agentMs: 3, receiveMs: 2 },
    ]);
  });

  it('never gives a span an exchange answered after it ended', () => {
    expect(splitCalls([{ startMs: 100, endMs: 104 }], [x(101, 101, 106)])).toEqual([]);
  });
});
