/**
 * Operator-mode authentication for harness nats-servers (docs/adr/0012): the operator JWT, the
 * system account, a `full` resolver in the node's own folder (deletions allowed, pack exchange
 * every 2 minutes) and the preloaded SYS and HUB account JWTs. Cluster accounts arrive at run time
 * through `$SYS.REQ.CLAIMS.UPDATE`; the resolver replicates them between the nodes.
 */
import path from 'node:path';
import type { NatsAuthRenderer } from './nats.js';

export interface OperatorModeAuth {
  operatorJwt: string;
  /** The system account's public key. */
  systemAccount: string;
  /** Account public key → account JWT, stored by every node at start. */
  preload: Record<string, string>;
}

const q = (s: string): string => JSON.stringify(s);

/** A NatsAuthRenderer for `startNats` / `startNatsCluster` (`renderAuth`). */
export function operatorModeAuth(auth: OperatorModeAuth): NatsAuthRenderer {
  return (node) =>
    [
      `operator: ${q(auth.operatorJwt)}`,
      `system_account: ${auth.systemAccount}`,
      `resolver { type: full, dir: ${q(path.join(node.dir, 'jwt'))}, allow_delete: true, interval: "2m" }`,
      'resolver_preload {',
      ...Object.entries(auth.preload).map(([key, jwt]) => `  ${key}: ${q(jwt)}`),
      '}',
    ].join('\n');
}
