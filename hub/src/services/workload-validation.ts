/**
 * Validation of a workload template before anything is stored: placement, namespace rules, the
 * spec (through the injected Kruise validator), the spec as every override turns it, and whether
 * the desired messages it makes can be published at all.
 * Problems carry the request's field paths (`spec.replicas`, `overrides.c1.replicas`).
 */
import { isValidClusterName, KruiseResources, templateAsV1alpha1, type WorkloadKind } from '@flotilla/api';
import type { CreateWorkloadRequest, UpdateWorkloadRequest } from '@flotilla/api';
import { desiredSizeProblems, type SizedContent } from '../domain/desired-size.js';
import { selectorProblems } from '../domain/label-selector.js';
import { overrideFieldPath, specForCluster, templateObject } from '../domain/manifest.js';
import type { FieldProblem, SpecValidator } from '../domain/spec-validator.js';
import { invalid } from '../errors.js';
import type { HubMetrics } from '../metrics.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** The kind's scope, from api's resource table. */
export function isClusterScoped(kind: WorkloadKind): boolean {
  return !KruiseResources[kind].namespaced;
}

/** Namespace rules: required (a DNS label) for namespaced kinds, absent for SidecarSet. */
export function namespaceProblems(kind: WorkloadKind, namespace: string): FieldProblem[] {
  if (isClusterScoped(kind)) {
    return namespace === '' ? [] : [{ path: 'namespace', message: `Forbidden: ${kind} is cluster-scoped` }];
  }
  if (namespace === '') return [{ path: 'namespace', message: 'Required value' }];
  if (namespace.length > 63 || !DNS_LABEL.test(namespace)) {
    return [{ path: 'namespace', message: 'Invalid value: must be a DNS-1123 label' }];
  }
  return [];
}

/**
 * The body written at v1beta1 (`apiVersion`) as the v1alpha1 template the hub stores; throws
 * HubError(HUB_ERR_INVALID) naming the fields that cannot be converted.
 */
export function asV1alpha1Body<B extends CreateWorkloadRequest | UpdateWorkloadRequest>(
  kind: WorkloadKind,
  body: B,
): B {
  const out = templateAsV1alpha1(kind, body);
  if (!out.ok) throw invalid(`the ${kind} template is invalid`, dedupe(out.errors));
  return out.template;
}

/** Throws HubError(HUB_ERR_INVALID) listing every problem with its field path. */
export function assertValidTemplate(
  validate: SpecValidator,
  target: { kind: WorkloadKind; name: string; namespace: string },
  body: CreateWorkloadRequest | UpdateWorkloadRequest,
): void {
  const problems: FieldProblem[] = [
    ...namespaceProblems(target.kind, target.namespace),
    ...selectorProblems(body.placement.clusterSelector, 'placement.clusterSelector'),
  ];
  const metadata = body.metadata ?? {};
  problems.push(...validate(templateObject(target, metadata, body.spec)));
  for (const cluster of Object.keys(body.overrides ?? {})) {
    if (!isValidClusterName(cluster)) {
      problems.push({ path: `overrides.${cluster}`, message: 'Invalid value: not a valid cluster name' });
      continue;
    }
    const spec = specForCluster({ spec: body.spec, overrides: body.overrides ?? {} }, cluster);
    for (const p of validate(templateObject(target, metadata, spec))) {
      if (p.path === 'spec' || p.path.startsWith('spec'))
        problems.push({ ...p, path: overrideFieldPath(cluster, p.path) });
    }
  }
  if (problems.length > 0) throw invalid(`the ${target.kind} template is invalid`, dedupe(problems));
}

function dedupe(problems: FieldProblem[]): FieldProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.path}\u0000${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Throws HubError(HUB_ERR_INVALID) when a desired message of this content would be larger than
 * `maxBytes` (what can be published), naming `spec`, `metadata` or `overrides.<cluster>`; counted
 * as the refusal `desired_message_size`.
 */
export function assertPublishable(
  target: { kind: WorkloadKind; name: string; namespace: string },
  content: SizedContent,
  maxBytes: number,
  metrics?: Pick<HubMetrics, 'refusals'>,
): void {
  const problems = desiredSizeProblems(target, content, maxBytes);
  if (problems.length === 0) return;
  metrics?.refusals.inc({ reason: 'desired_message_size' });
  throw invalid(`the ${target.kind}'s desired messages would be too large to publish`, problems);
}
