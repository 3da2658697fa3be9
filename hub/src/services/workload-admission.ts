/**
 * Admission of workload content by the workload policy (domain/workload-policy.ts): the spec as
 * every cluster would get it, less the controls the workload's exceptions allow. Runs inside the
 * transaction that stores the content, so an exception removed concurrently is either seen or
 * the write commits before the removal.
 */
import type { WorkloadKind } from '@flotilla/api';
import type { Tx } from '../db/client.js';
import { effectiveViolations, type PolicyContent, type PolicyControl } from '../domain/workload-policy.js';
import { HubError } from '../errors.js';
import type { HubMetrics } from '../metrics.js';
import { exceptionsFor } from '../repositories/policy-repo.js';

export interface WorkloadAdmission {
  /** Throws HUB_ERR_POLICY_DENIED (403) listing every refused field with its control. */
  check(tx: Tx, target: { kind: WorkloadKind; namespace: string; name: string }, content: PolicyContent): Promise<void>;
}

export function createWorkloadAdmission(deps: {
  systemNamespaces: readonly string[];
  metrics?: Pick<HubMetrics, 'refusals'>;
}): WorkloadAdmission {
  const system = new Set(deps.systemNamespaces);
  return {
    async check(tx, target, content) {
      const allowed = new Set<PolicyControl>();
      for (const e of await exceptionsFor(tx, target)) for (const c of e.allow as PolicyControl[]) allowed.add(c);
      const violations = effectiveViolations(target, content, system, allowed);
      if (violations.length === 0) return;
      deps.metrics?.refusals.inc({ reason: 'workload_policy' });
      throw new HubError(
        'HUB_ERR_POLICY_DENIED',
        `the workload policy refuses this ${target.kind} (Pod Security Standards baseline and system namespaces; ` +
          'an admin may add an exception)',
        { details: violations.map(({ path, message }) => ({ path, message })) },
      );
    },
  };
}
