/**
 * A sidecar's v1.9 `resourcesPolicy` at pod creation (pkg/webhook/pod/mutating/sidecarset_resources.go):
 *
 * 1. targets: the pod's native-sidecar init containers and its containers, minus every name any
 *    SidecarSet matched to the pod injects, whose name the regex matches anywhere (RE2 partial
 *    match; anchor with ^…$); none is an error that refuses the pod;
 * 2. cpu and memory aggregate by `sum` or `max`; a limit aggregates only when every target has
 *    it (else unlimited, and that limit is left unset), a missing request counts as 0;
 * 3. each non-empty expression is evaluated with `cpu` or `memory` bound to the aggregate limit
 *    (limit expressions) or request (request expressions);
 * 4. the sidecar's `resources` is replaced by the computed entries.
 */
import { computeResource, parseQuantityMilli, ResourceExprError, type QuantityFormat } from '@flotilla/api';
import type { Container, SidecarContainer } from '@flotilla/api';
import { AgentError } from '../../../errors.js';
import type { MutablePod } from '../../../kube/types.js';

type Amount = { milli: bigint; format: QuantityFormat };
type Aggregate = { limit?: Amount; request: Amount };
type ResourceName = 'cpu' | 'memory';
type Resources = { limits?: Record<string, string>; requests?: Record<string, string> };

const ZERO: Amount = { milli: 0n, format: 'DecimalSI' };

function amountOf(list: unknown, name: ResourceName): Amount | undefined {
  const text = (list as Record<string, unknown> | undefined)?.[name];
  return typeof text === 'string' || typeof text === 'number' ? parseQuantityMilli(String(text)) : undefined;
}

/** The pod containers the policy reads. Throws SIDECARSET_ERR_RESOURCES_POLICY when none. */
export function targetContainers(pod: MutablePod, regex: string, injectedNames: ReadonlySet<string>): Container[] {
  const pattern = new RegExp(regex, 'u');
  const candidates = [
    ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always'),
    ...(pod.spec?.containers ?? []),
  ];
  const targets = candidates.filter((c) => !injectedNames.has(c.name) && pattern.test(c.name));
  if (targets.length === 0) {
    throw new AgentError(
      'SIDECARSET_ERR_RESOURCES_POLICY',
      `no containers match the regex pattern ${JSON.stringify(regex)}`,
    );
  }
  return targets;
}

/** Sum or max of one resource over the targets (aggregateResourcesBySum / ByMax). */
export function aggregate(targets: readonly Container[], name: ResourceName, mode: string): Aggregate {
  // Sums start from a zero quantity, which takes the format of the first one added (Quantity.Add).
  const combine = (a: Amount, b: Amount): Amount =>
    mode === 'max'
      ? b.milli > a.milli
        ? b
        : a
      : { milli: a.milli + b.milli, format: a.milli === 0n ? b.format : a.format };
  let limit: Amount | undefined;
  let unlimited = false;
  let request: Amount | undefined;
  for (const c of targets) {
    const resources = c.resources as Resources | undefined;
    const l = amountOf(resources?.limits, name);
    if (l === undefined) unlimited = true;
    else limit = limit ? combine(limit, l) : l;
    const r = amountOf(resources?.requests, name);
    if (r !== undefined) request = request ? combine(request, r) : r;
  }
  return { ...(unlimited || !limit ? {} : { limit }), request: request ?? ZERO };
}

/** The resources the policy gives `sidecar` in `pod`; undefined when it has no policy. */
export function policyResources(
  sidecar: SidecarContainer,
  pod: MutablePod,
  injectedNames: ReadonlySet<string>,
): Resources | undefined {
  const policy = sidecar.resourcesPolicy;
  if (!policy) return undefined;
  const targets = targetContainers(pod, policy.targetContainersNameRegex ?? '.*', injectedNames);
  const totals = {
    cpu: aggregate(targets, 'cpu', policy.targetContainersMode),
    memory: aggregate(targets, 'memory', policy.targetContainersMode),
  };
  const out: Resources = {};
  for (const kind of ['limits', 'requests'] as const) {
    const entries: Record<string, string> = {};
    for (const name of ['cpu', 'memory'] as const) {
      const expr = policy.resourcesExpr[kind]?.[name];
      const value = kind === 'limits' ? totals[name].limit : totals[name].request;
      if (!expr || !value) continue;
      entries[name] = evaluate(sidecar.name, `${kind}.${name}`, expr, value);
    }
    if (Object.keys(entries).length > 0) out[kind] = entries;
  }
  return out;
}

function evaluate(container: string, field: string, expr: string, value: Amount): string {
  try {
    return computeResource(expr, value);
  } catch (err) {
    if (!(err instanceof ResourceExprError)) throw err;
    throw new AgentError(
      'SIDECARSET_ERR_RESOURCES_POLICY',
      `sidecar ${container}: resourcesPolicy.resourcesExpr.${field} ${JSON.stringify(expr)}: ${err.message}`,
    );
  }
}
