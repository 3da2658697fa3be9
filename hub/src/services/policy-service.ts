/**
 * The workload admission policy and its exceptions: anyone with a viewer token may read them;
 * exceptions are created, replaced and deleted by admins only (the routes require the role),
 * each change in one transaction with its audit entry. Validation names the field: an exception
 * covers a namespace (optionally one kind in it) or one workload.
 */
import type {
  FieldProblem,
  PolicyException,
  PolicyExceptionList,
  PutPolicyExceptionRequest,
  WorkloadPolicy,
} from '@flotilla/api';
import { WORKLOAD_POLICY_CONTROLS, dns1123LabelErrors } from '@flotilla/api';
import type { Principal } from '../auth/tokens.js';
import type { Db } from '../db/client.js';
import { invalid, notFound } from '../errors.js';
import { recordAudit } from '../repositories/audit-repo.js';
import {
  deleteException,
  getException,
  listExceptions,
  putException,
  toApiException,
  type ExceptionValues,
} from '../repositories/policy-repo.js';
import { isClusterScoped } from './workload-validation.js';

export interface PolicyService {
  /** The policy in force: Pod Security Standards baseline, and the system namespaces it keeps workloads out of. */
  policy(): WorkloadPolicy;
  exceptions(): Promise<PolicyExceptionList>;
  exception(name: string): Promise<PolicyException>;
  put(
    actor: Principal,
    name: string,
    body: PutPolicyExceptionRequest,
  ): Promise<{ exception: PolicyException; created: boolean }>;
  remove(actor: Principal, name: string): Promise<void>;
}

/** The stored scope of an exception, or the problems with its `match`. */
export function exceptionScope(
  match: PutPolicyExceptionRequest['match'],
): { scope: Pick<ExceptionValues, 'namespace' | 'kind' | 'workloadName'> } | { problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const namespace = match.namespace ?? '';
  if (match.name !== undefined && match.kind === undefined) {
    problems.push({ path: 'match.kind', message: 'Required value: an exception for one workload names its kind' });
  }
  if (match.kind !== undefined && isClusterScoped(match.kind)) {
    // A cluster-scoped workload has no namespace to cover: the exception names the workload.
    if (namespace !== '')
      problems.push({ path: 'match.namespace', message: `Forbidden: ${match.kind} is cluster-scoped` });
    if (match.name === undefined) {
      problems.push({ path: 'match.name', message: `Required value: an exception for ${match.kind}s names one` });
    }
  } else if (namespace === '') {
    problems.push({ path: 'match.namespace', message: 'Required value: the namespace the exception covers' });
  } else {
    for (const m of dns1123LabelErrors(namespace)) problems.push({ path: 'match.namespace', message: m });
  }
  if (problems.length > 0) return { problems };
  return { scope: { namespace, kind: match.kind ?? null, workloadName: match.name ?? null } };
}

export function createPolicyService(deps: { db: Db; systemNamespaces: string[] }): PolicyService {
  const { db } = deps;
  return {
    policy: () => ({
      level: 'baseline',
      systemNamespaces: deps.systemNamespaces,
      controls: [...WORKLOAD_POLICY_CONTROLS],
    }),
    exceptions: async () => ({ items: (await listExceptions(db)).map(toApiException) }),
    async exception(name) {
      const row = await getException(db, name);
      if (!row) throw notFound(`policy exception ${name}`);
      return toApiException(row);
    },

    async put(actor, name, body) {
      const checked = exceptionScope(body.match);
      if ('problems' in checked) throw invalid('the policy exception is invalid', checked.problems);
      const values: ExceptionValues = {
        name,
        ...checked.scope,
        allow: [...new Set(body.allow)],
        reason: body.reason,
      };
      return db.transaction(async (tx) => {
        const { row, created } = await putException(tx, values, actor.name);
        await recordAudit(tx, {
          actor: actor.name,
          action: created ? 'policy.exception.create' : 'policy.exception.update',
          targetType: 'policy-exception',
          targetId: name,
          details: { match: body.match, allow: values.allow, reason: body.reason },
        });
        return { exception: toApiException(row), created };
      });
    },

    async remove(actor, name) {
      await db.transaction(async (tx) => {
        const row = await deleteException(tx, name);
        if (!row) throw notFound(`policy exception ${name}`);
        await recordAudit(tx, {
          actor: actor.name,
          action: 'policy.exception.delete',
          targetType: 'policy-exception',
          targetId: name,
          details: { match: toApiException(row).match, allow: row.allow },
        });
      });
    },
  };
}
