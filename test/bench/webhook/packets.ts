// Packet times of the webhook's connections (tcpdump on the loopback interface, where a machine's
// traffic to its own address goes), to split each traced HTTP request of the apiserver into three
// parts at the kernel's timestamps: the apiserver sending the review (from its client span's start
// to the request's first packet), the agent (the request's last packet to the answer's first: its
// wake-up, TLS, HTTP, handler and write, and any wait for a CPU), and the apiserver receiving the
// answer (the answer's first packet to the span's end). The agent's own handling metric starts
// only once its event loop has read the request, so it cannot see the agent's waits for a CPU.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** One data-carrying packet of a webhook connection. */
export interface Packet {
  /** Kernel timestamp, ms since the epoch. */
  ms: number;
  /** The client's (apiserver's) port: one per connection. */
  conn: number;
  toServer: boolean;
}

/** One HTTP/1.1 request and its answer on a kept connection (Go's transport never pipelines). */
export interface Exchange {
  conn: number;
  requestFirstMs: number;
  requestLastMs: number;
  answerFirstMs: number;
}

const LINE = /^(\d+)\.(\d{6}) IP6? (\S+)\.(\d+) > (\S+)\.(\d+): .*length (\d+)/;

/** Data packets from `tcpdump -n -tt` lines, for connections to `serverPort`; others are skipped. */
export function parseTcpdump(lines: readonly string[], serverPort: number): Packet[] {
  const out: Packet[] = [];
  for (const line of lines) {
    const m = LINE.exec(line);
    if (!m || Number(m[7]) === 0) continue;
    const [src, dst] = [Number(m[4]), Number(m[6])];
    // Whole ms and µs apart: a float of "s.µs" times 1000 is off by rounding.
    const ms = Number(m[1]) * 1000 + Number(m[2]) / 1000;
    if (dst === serverPort) out.push({ ms, conn: src, toServer: true });
    else if (src === serverPort) out.push({ ms, conn: dst, toServer: false });
  }
  return out;
}

/**
 * The exchanges of each connection, in time order: a run of packets to the server then the first
 * packet back. TLS records the server sends unasked (session tickets after a handshake) have no
 * request before them and are skipped.
 */
export function exchanges(packets: readonly Packet[]): Exchange[] {
  const byConn = new Map<number, Packet[]>();
  for (const p of packets) {
    const list = byConn.get(p.conn) ?? [];
    list.push(p);
    byConn.set(p.conn, list);
  }
  const out: Exchange[] = [];
  for (const [conn, list] of byConn) {
    list.sort((a, b) => a.ms - b.ms);
    let first: number | undefined;
    let last: number | undefined;
    for (const p of list) {
      if (p.toServer) {
        first ??= p.ms;
        last = p.ms;
      } else if (first !== undefined && last !== undefined) {
        out.push({ conn, requestFirstMs: first, requestLastMs: last, answerFirstMs: p.ms });
        first = last = undefined;
      }
    }
  }
  return out.sort((a, b) => a.requestFirstMs - b.requestFirstMs);
}

/** A traced HTTP request of the apiserver: its client span, ms since the epoch. */
export interface HttpSpan {
  startMs: number;
  endMs: number;
}

export interface SplitCall {
  /** From the span's start to the request's first packet. */
  sendMs: number;
  /** From the request's last packet to the answer's first. */
  agentMs: number;
  /** From the answer's first packet to the span's end. */
  receiveMs: number;
}

/**
 * Pairs each span with the exchange inside it: spans in order of start, each taking the earliest
 * unclaimed exchange that begins after it started and was answered before it ended. Two calls in
 * flight at once can swap their exchanges when the later one's request left first; their parts
 * are then each other's, which moves nothing between the parts' distributions by much. Spans
 * without such an exchange (their packets fell outside the capture) are left out.
 */
export function splitCalls(spans: readonly HttpSpan[], found: readonly Exchange[]): SplitCall[] {
  const taken = new Set<number>();
  const out: SplitCall[] = [];
  const ordered = [...spans].sort((a, b) => a.startMs - b.startMs);
  let from = 0;
  for (const span of ordered) {
    while (from < found.length && (taken.has(from) || found[from]!.requestFirstMs < span.startMs)) from++;
    for (let i = from; i < found.length && found[i]!.requestFirstMs <= span.endMs; i++) {
      const x = found[i]!;
      if (taken.has(i) || x.answerFirstMs > span.endMs) continue;
      taken.add(i);
      out.push({
        sendMs: x.requestFirstMs - span.startMs,
        agentMs: x.answerFirstMs - x.requestLastMs,
        receiveMs: span.endMs - x.answerFirstMs,
      });
      break;
    }
  }
  return out;
}

export interface PacketCapture {
  /** Stops capturing and returns the exchanges seen. */
  stop(): Promise<Exchange[]>;
}

export const tcpdumpAvailable = (): boolean => spawnSync('tcpdump', ['--version']).status === 0;

/** Captures the webhook's connections on `iface` (loopback: the apiserver calls an address of this machine). */
export function capturePackets(serverPort: number, iface = 'lo'): PacketCapture {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'whbench-pcap-')), 'webhook.pcap');
  // Headers only: 128 bytes hold every header up to TCP's options.
  const child: ChildProcess = spawn('tcpdump', ['-i', iface, '-n', '-s', '128', '-w', file, `tcp port ${serverPort}`], {
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  return {
    stop: async () => {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGINT');
      await exited;
      const read = spawnSync('tcpdump', ['-r', file, '-n', '-tt'], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
      if (read.status !== 0) throw new Error(`tcpdump -r ${file}: ${read.stderr}`);
      return exchanges(parseTcpdump(read.stdout.split('\n'), serverPort));
    },
  };
}
