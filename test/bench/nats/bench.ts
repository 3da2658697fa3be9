// Measures the harness's NATS cluster (3 TLS nodes, JetStream clustered): the time to start it,
// and what a SIGKILL of the node leading an R3 stream costs while a client keeps publishing:
// how long writes fail (until a new leader acknowledges), and how long until the killed node is
// back and every node reports JetStream current. Prints a summary and writes
// test/bench/results/nats.json. Run: npm run bench:nats [-- <runs, default 5>]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { readVersions, startNatsCluster, type NatsCluster } from '../../env/src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const RUNS = Number(process.argv[2] ?? 5);
const round = (ms: number): number => Math.round(ms);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Run {
  startMs: number;
  /** From the SIGKILL until a publish was acknowledged again. */
  writesBackMs: number;
  /** From the SIGKILL until the node was restarted and every node reported JetStream current. */
  nodeBackMs: number;
  /** Publishes acknowledged before the kill and stored afterwards (must equal `acked`). */
  acked: number;
  stored: number;
}

async function oneRun(dir: string): Promise<Run> {
  const t0 = performance.now();
  const cluster: NatsCluster = await startNatsCluster({ dir });
  const startMs = performance.now() - t0;
  const nc = await connect({
    servers: cluster.urls,
    tls: cluster.tls,
    reconnectTimeWait: 50,
    maxReconnectAttempts: -1,
  });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'BENCH', subjects: ['bench.>'], num_replicas: 3 });
    const js = jsm.jetstream();
    let acked = 0;
    for (; acked < 100; acked++) await js.publish(`bench.${acked}`, 'x', { msgID: `m${acked}` });
    const leader = await cluster.streamLeader('BENCH');
    const killedAt = performance.now();
    await leader.kill();
    // Keep writing: each attempt waits at most 500 ms for its acknowledgement.
    for (;;) {
      try {
        await js.publish(`bench.${acked}`, 'x', { msgID: `m${acked}`, timeout: 500 });
        acked++;
        break;
      } catch {
        // no leader yet, or the client was connected to the dead node and is moving
      }
    }
    const writesBackMs = performance.now() - killedAt;
    await leader.start();
    await cluster.waitHealthy(60_000);
    const nodeBackMs = performance.now() - killedAt;
    const stored = (await jsm.streams.info('BENCH')).state.messages;
    return { startMs, writesBackMs, nodeBackMs, acked, stored };
  } finally {
    await nc.close();
    await cluster.stop();
  }
}

const runs: Run[] = [];
for (let i = 0; i < RUNS; i++) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-bench-nats-'));
  try {
    const r = await oneRun(dir);
    runs.push(r);
    console.log(
      `[bench nats] run ${i + 1}: start ${round(r.startMs)} ms, writes back ${round(r.writesBackMs)} ms, ` +
        `node back ${round(r.nodeBackMs)} ms, ${r.stored}/${r.acked} acknowledged messages stored`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const result = {
  measuredAt: new Date().toISOString(),
  natsServer: readVersions().NATS_SERVER_VERSION,
  cores: os.cpus().length,
  loadAverageAtEnd: os.loadavg().map((l) => Math.round(l * 10) / 10),
  runs: RUNS,
  medianStartMs: round(median(runs.map((r) => r.startMs))),
  medianWritesBackAfterLeaderKillMs: round(median(runs.map((r) => r.writesBackMs))),
  medianNodeBackAfterKillMs: round(median(runs.map((r) => r.nodeBackMs))),
  lostAcknowledged: runs.reduce((n, r) => n + (r.acked - r.stored), 0),
  perRun: runs.map((r) => ({
    startMs: round(r.startMs),
    writesBackMs: round(r.writesBackMs),
    nodeBackMs: round(r.nodeBackMs),
  })),
};
mkdirSync(path.join(here, '../results'), { recursive: true });
writeFileSync(path.join(here, '../results/nats.json'), JSON.stringify(result, null, 2) + '\n');
console.log(JSON.stringify(result, null, 2));
