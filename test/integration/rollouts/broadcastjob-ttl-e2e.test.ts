/**
 * A BroadcastJob with ttlSecondsAfterFinished, end to end: the run's first two harness clusters,
 * each with a REAL agent process (hub link + BroadcastJob controller, scoped to this suite's
 * namespace), the hub as its own process on a fresh Postgres database and a NATS cluster.
 *
 * The job runs once on each cluster's two kwok nodes, completes, and its controller deletes it
 * after the TTL. The agent must not take that for drift: the job is never created again, the hub
 * keeps seeing the cluster's run as completed (Healthy, not Missing), and the agent's memory of
 * the run is in its ConfigMap, where a restarted agent finds it.
 *
 * Why the check is not timed: the agent's status pass repairs drift (which would re-create the
 * job, before going on) before it sends the reports of that pass; the hub showing the report that
 * says the job was removed by its TTL therefore comes after a drift check that saw the job gone.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkloadStatus } from '@flotilla/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fleet } from '../../fleet/fleet.js';
import { customResource, eventually, type Kube } from '../helpers/kube.js';
import { prepareFleetSuite, startBroadcastJobFleet, type FleetSuite } from './fleet-suite.js';

const NODES = 2;
const JOB = 'ttl-task';
const EXIT_CODE_LABEL = 'flotilla.test/exit-code';

let fleet: Fleet;
let suite: FleetSuite;

beforeAll(async () => {
  suite = await prepareFleetSuite('bcjttl', NODES);
  fleet = await startBroadcastJobFleet(suite, 'bcjttl');
}, 240_000);

afterAll(async () => {
  await fleet?.stop();
  await suite?.cleanUp();
});

interface RawJob {
  metadata?: { uid?: string };
  status?: { phase?: string };
}

async function getJob(k: Kube): Promise<RawJob | undefined> {
  const { group, version, plural } = customResource('BroadcastJob');
  try {
    return (await k.custom.getNamespacedCustomObject({
      group,
      version,
      plural,
      namespace: suite.ns,
      name: JOB,
    })) as RawJob;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/** Every uid and phase each cluster's job was seen with, until stopped. */
function watchJobs(): { seen: Map<string, Set<string>>; stop: () => Promise<void> } {
  const seen = new Map(suite.names.map((n) => [n, new Set<string>()]));
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      for (const n of suite.names) {
        const job = await getJob(suite.kubes.get(n)!).catch(() => undefined);
        if (job) seen.get(n)!.add(`${job.metadata?.uid}:${job.status?.phase ?? ''}`);
      }
      await sleep(100);
    }
  })();
  return {
    seen,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

describe('a BroadcastJob removed by its ttlSecondsAfterFinished', () => {
  it('is not created again, and the hub keeps seeing its run completed', async () => {
    const jobs = watchJobs();
    try {
      const created = await fleet.api<{ id: string }>('POST', '/workloads', {
        kind: 'BroadcastJob',
        name: JOB,
        namespace: suite.ns,
        spec: {
          completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 3 },
          template: {
            metadata: { labels: { app: JOB, [EXIT_CODE_LABEL]: '0' } },
            spec: { restartPolicy: 'Never', ...suite.placement(), containers: [{ name: 'main', image: 'task:v1' }] },
          },
        },
        placement: suite.clusterPlacement(),
        updatePolicy: 'Rollout',
      });
      const rows = await eventually(
        'every cluster reports the run completed after its TTL removed the job',
        async () => {
          const s = await fleet.api<WorkloadStatus>('GET', `/workloads/${created.id}/status`);
          const done = s.items.filter(
            (r) => r.health === 'Healthy' && r.upToDate && r.message.includes('ttlSecondsAfterFinished'),
          );
          return done.length === suite.names.length ? s.items : undefined;
        },
        120_000,
        250,
      );
      for (const r of rows) expect(r.counts, r.cluster).toMatchObject({ replicas: NODES, readyReplicas: NODES });

      for (const n of suite.names) {
        const k = suite.kubes.get(n)!;
        // Gone, and only ever the one job, which was seen completed.
        expect(await getJob(k), n).toBeUndefined();
        const uids = new Set([...jobs.seen.get(n)!].map((s) => s.split(':')[0]));
        expect(uids.size, `${n}: ${[...jobs.seen.get(n)!].join(', ')}`).toBe(1);
        expect(
          [...jobs.seen.get(n)!].some((s) => s.endsWith(':completed')),
          n,
        ).toBe(true);
        // The run is remembered where a restarted agent reads it.
        const cm = await k.core.readNamespacedConfigMap({ name: 'flotilla-agent-finished-jobs', namespace: suite.ns });
        expect(Object.keys(cm.data ?? {}), n).toContain(`${suite.ns}.${JOB}`);
      }
    } finally {
      await jobs.stop();
    }
  });
});
