/**
 * The ground a fleet e2e suite stands on in the run's shared clusters: the first two harness
 * clusters, a namespace and fleet member names of its own, and per cluster a few kwok nodes of
 * its own, labelled and tainted so that only its pods land there and no other suite's pods do.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import { fakeNode } from '@flotilla/test';
import { startFleet, type Fleet, type FleetMember } from '../../fleet/fleet.js';
import { clusters, type ClusterInfo } from '../helpers/context.js';
import { kube, type Kube } from '../helpers/kube.js';

export interface FleetSuite {
  /** Random, in every name below. */
  suffix: string;
  /** `rollouts-<prefix>-<suffix>`: the agents' namespace and the workloads'. */
  ns: string;
  infos: ClusterInfo[];
  /** The clusters' names in the fleet, `<prefix>-<cluster>`, in cluster order. */
  names: string[];
  kubes: Map<string, Kube>;
  /** The label every node of the suite carries, with the value `suffix`. */
  nodeLabel: string;
  nodeNames: string[];
  /** The fleet members, labelled `fleet: <prefix>-<suffix>` and `ring: <index>`. */
  members(): FleetMember[];
  /** The workloads' placement: every member of the suite. */
  clusterPlacement(): { clusterSelector: { matchLabels: Record<string, string> } };
  /** What a pod template needs to run on the suite's nodes only. */
  placement(): { nodeSelector: Record<string, string>; tolerations: Record<string, string>[] };
  /** Deletes the namespace and the nodes in every cluster. */
  cleanUp(): Promise<void>;
}

/** Picks the clusters and names, and adds `nodes` kwok nodes to each cluster. */
export async function prepareFleetSuite(prefix: string, nodes: number): Promise<FleetSuite> {
  const infos = clusters().slice(0, 2);
  if (infos.length < 2) throw new Error(`the ${prefix} rollout suite needs FLOTILLA_TEST_CLUSTERS >= 2`);
  const suffix = Math.random().toString(36).slice(2, 7);
  const ns = `rollouts-${prefix}-${suffix}`;
  const names = infos.map((c) => `${prefix}-${c.name}`);
  const kubes = new Map(infos.map((c, i) => [names[i]!, kube(c)]));
  const nodeLabel = `flotilla.test/fleet-${prefix}`;
  const taint = { key: `flotilla.test/fleet-${prefix}-only`, value: 'yes', effect: 'NoSchedule' };
  const nodeNames = Array.from({ length: nodes }, (_, i) => `fleet-${prefix}-${suffix}-${i}`);
  await Promise.all(
    [...kubes.values()].map(async (k) => {
      for (const name of nodeNames) {
        const node: V1Node = fakeNode(name, 0);
        node.metadata!.labels = { ...node.metadata!.labels, [nodeLabel]: suffix };
        node.spec = { taints: [taint] };
        await k.core.createNode({ body: node });
      }
    }),
  );
  return {
    suffix,
    ns,
    infos,
    names,
    kubes,
    nodeLabel,
    nodeNames,
    members: () =>
      infos.map((c, i) => ({ name: names[i]!, cluster: c, labels: { fleet: `${prefix}-${suffix}`, ring: String(i) } })),
    clusterPlacement: () => ({ clusterSelector: { matchLabels: { fleet: `${prefix}-${suffix}` } } }),
    placement: () => ({
      nodeSelector: { [nodeLabel]: suffix },
      tolerations: [{ key: taint.key, operator: 'Exists', effect: 'NoSchedule' }],
    }),
    async cleanUp() {
      // The clusters outlive the suite: leave nothing behind in them.
      for (const k of kubes.values()) {
        await k.core.deleteNamespace({ name: ns }).catch(() => undefined);
        for (const name of nodeNames) await k.core.deleteNode({ name }).catch(() => undefined);
      }
    },
  };
}

/**
 * The fleet of a BroadcastJob suite: each agent runs the hub link and the BroadcastJob controller,
 * the controller narrowed to the suite's namespace and nodes (test/fleet/agent/scoped.ts).
 */
export function startBroadcastJobFleet(suite: FleetSuite, prefix: string): Promise<Fleet> {
  return startFleet({
    dir: mkdtempSync(path.join(os.tmpdir(), `flotilla-rollouts-${prefix}-`)),
    env: process.env,
    namespace: suite.ns,
    scopeControllers: true,
    scopeLabel: `${suite.nodeLabel}=${suite.suffix}`,
    components: 'broadcastjob,hublink',
    members: suite.members(),
    rolloutTickMs: 200,
    logLevel: 'info',
  });
}
