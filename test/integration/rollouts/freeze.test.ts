/**
 * A soak counts only time the hub has fresh news of the cluster. Real hub, its own NATS cluster
 * (every node frozen with SIGSTOP by the test), real Postgres; the clusters' agents are plain NATS clients
 * with their real credentials that heartbeat and report healthy every second (sim-agent.ts).
 * While NATS is frozen no status can arrive: the canary's soak must not pass and the next wave
 * must not start, however long the freeze; after the thaw the rollout finishes by itself.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { eventually } from '../helpers/kube.js';
import { cloneSetSpec } from '../hub/fixtures.js';
import {
  connectAs,
  joinCluster,
  rest,
  startFleetNats,
  startTestHub,
  type FleetNats,
  type TestHub,
} from '../hub/fleet.js';
import { startSimAgent, type SimAgent } from '../hub/sim-agent.js';

const SOAK_SECONDS = 10;
const FREEZE_MS = 2 * SOAK_SECONDS * 1000;

let nats: FleetNats;
let t: TestHub;
const connections: NatsConnection[] = [];
const agents: SimAgent[] = [];

interface View {
  phase: string;
  message: string;
  waves: { name: string; phase: string; startedAt: string | null }[];
  clusters: { name: string; phase: string; finishedAt: string | null; message: string }[];
}

beforeAll(async () => {
  nats = await startFleetNats();
  t = await startTestHub(nats, {
    env: {
      // Agents here beat every second: news older than 3 s is stale.
      FLOTILLA_STATUS_FRESHNESS_SECONDS: '3',
      FLOTILLA_NATS_PROBE_INTERVAL_MS: '500',
      FLOTILLA_READY_TIMEOUT_MS: '1000',
      FLOTILLA_ROLLOUT_TICK_MS: '200',
    },
  });
  for (const name of ['freeze-a', 'freeze-b']) {
    const creds = await joinCluster(t, name, { fleet: 'freeze' });
    const nc = await connectAs(nats, creds);
    connections.push(nc);
    agents.push(await startSimAgent(nc, creds, { intervalMs: 1000 }));
  }
});

afterAll(async () => {
  for (const a of agents) await a.stop();
  for (const nc of connections) await nc.close();
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
});

const view = (id: string): Promise<View> => rest<View>(t, 'GET', `/api/v1/rollouts/${id}`, t.viewerToken);
const cluster = (v: View, name: string): View['clusters'][number] => v.clusters.find((c) => c.name === name)!;

describe('soak with NATS frozen', () => {
  it('does not pass while no status can arrive, and passes after the thaw', async () => {
    const placement = { clusterSelector: { matchLabels: { fleet: 'freeze' } } };
    const w = await rest<{ id: string }>(t, 'POST', '/api/v1/workloads', t.operatorToken, {
      kind: 'CloneSet',
      name: 'freeze-web',
      namespace: 'apps',
      spec: cloneSetSpec(2, 'registry.local/app:v1'),
      placement,
      updatePolicy: 'Rollout',
    });
    await rest(t, 'PUT', `/api/v1/workloads/${w.id}`, t.operatorToken, {
      spec: cloneSetSpec(2, 'registry.local/app:v2'),
      placement,
    });
    const r = await rest<{ id: string }>(t, 'POST', `/api/v1/workloads/${w.id}/rollouts`, t.operatorToken, {
      strategy: {
        waves: [
          { name: 'canary', clusters: { names: ['freeze-a'] }, soakSeconds: SOAK_SECONDS },
          { name: 'rest', soakSeconds: 0 },
        ],
      },
    });
    await eventually(
      'the canary soaks',
      async () => cluster(await view(r.id), 'freeze-a').phase === 'Soaking',
      60_000,
      100,
    );

    nats.cluster.pause();
    const seen: View[] = [];
    let thawedAt: number;
    try {
      const until = Date.now() + FREEZE_MS;
      while (Date.now() < until) {
        seen.push(await view(r.id));
        await sleep(500);
      }
    } finally {
      nats.cluster.resume();
      thawedAt = Date.now();
    }
    // Frozen for twice the soak: the canary never passed, the next wave never started.
    for (const v of seen) {
      expect(cluster(v, 'freeze-a').phase).toBe('Soaking');
      expect(v.waves[1]!.phase).toBe('Pending');
      expect(cluster(v, 'freeze-b').phase).toBe('Pending');
    }
    expect(cluster(seen.at(-1)!, 'freeze-a').message).toMatch(/soak paused/);

    const final = await eventually(
      'the rollout finishes after the thaw',
      async () => {
        const v = await view(r.id);
        return ['Succeeded', 'Failed', 'RolledBack'].includes(v.phase) ? v : undefined;
      },
      60_000,
    );
    expect(final.phase, final.message).toBe('Succeeded');
    expect(Date.parse(cluster(final, 'freeze-a').finishedAt!)).toBeGreaterThanOrEqual(thawedAt);
    expect(Date.parse(final.waves[1]!.startedAt!)).toBeGreaterThanOrEqual(thawedAt);
  });
});
