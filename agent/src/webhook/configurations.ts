/**
 * The agent's MutatingWebhookConfiguration and ValidatingWebhookConfiguration, built from the
 * webhook definitions as OpenKruise's chart lays them out: failurePolicy Fail, sideEffects None,
 * admission review v1, a configurable timeout, and a namespaceSelector that never covers
 * kube-system or the agent's own namespace, so a broken agent cannot block the control plane or
 * its own restart. Pods labelled `flotilla.io/webhook: disabled` are skipped too (objectSelector),
 * an escape hatch for pods that must start while the agent is down.
 */
import type { LabelSelector } from '../runtime/label-selector.js';
import type { KubeObject } from '../runtime/kube-object.js';
import type { WebhookDefinition } from './registry.js';

/** Label that exempts a pod from the pod webhook. */
export const LABEL_WEBHOOK_OPT_OUT = 'flotilla.io/webhook';

export type ClientConfigTarget =
  { kind: 'service'; namespace: string; name: string; port: number } | { kind: 'url'; baseUrl: string };

export interface WebhookConfigurationOptions {
  mutatingName: string;
  validatingName: string;
  target: ClientConfigTarget;
  /** PEM of every CA the apiserver should trust for our serving certificate. */
  caBundlePem: string;
  timeoutSeconds: number;
  /** The agent's namespace: never intercepted. */
  agentNamespace: string;
  /** Further narrows which namespaces are covered (tests restrict themselves to their own). */
  namespaceSelector?: LabelSelector;
  /** Narrows which cluster-scoped objects (SidecarSets, NodeImages) are covered. */
  clusterScopedObjectSelector?: LabelSelector;
  /** Fail (default, as OpenKruise) or Ignore. */
  failurePolicy?: 'Fail' | 'Ignore';
}

interface Webhook {
  name: string;
  admissionReviewVersions: string[];
  sideEffects: 'None';
  failurePolicy: 'Fail' | 'Ignore';
  matchPolicy: 'Equivalent';
  timeoutSeconds: number;
  clientConfig: {
    url?: string;
    service?: { namespace: string; name: string; port: number; path: string };
    caBundle: string;
  };
  rules: { apiGroups: string[]; apiVersions: string[]; resources: string[]; operations: string[]; scope: string }[];
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  reinvocationPolicy?: 'Never' | 'IfNeeded';
}

export interface WebhookConfiguration extends KubeObject {
  webhooks: Webhook[];
}

/** The namespaces every webhook skips, plus the caller's narrowing. */
export function namespaceSelectorFor(options: WebhookConfigurationOptions): LabelSelector {
  const excluded = [...new Set(['kube-system', options.agentNamespace])].sort();
  return {
    ...(options.namespaceSelector?.matchLabels ? { matchLabels: options.namespaceSelector.matchLabels } : {}),
    matchExpressions: [
      { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: excluded },
      ...(options.namespaceSelector?.matchExpressions ?? []),
    ],
  };
}

/** Both selectors at once (either may be absent). */
function mergeSelectors(a: LabelSelector | undefined, b: LabelSelector | undefined): LabelSelector | undefined {
  if (!a || !b) return a ?? b;
  const matchLabels = { ...a.matchLabels, ...b.matchLabels };
  const matchExpressions = [...(a.matchExpressions ?? []), ...(b.matchExpressions ?? [])];
  return {
    ...(Object.keys(matchLabels).length > 0 ? { matchLabels } : {}),
    ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
  };
}

function webhookOf(def: WebhookDefinition, options: WebhookConfigurationOptions): Webhook {
  const t = options.target;
  const caBundle = Buffer.from(options.caBundlePem).toString('base64');
  const clientConfig =
    t.kind === 'url'
      ? { url: `${t.baseUrl.replace(/\/$/, '')}${def.path}`, caBundle }
      : { service: { namespace: t.namespace, name: t.name, port: t.port, path: def.path }, caBundle };
  // Every pods webhook (pod creates, and the PodUnavailableBudget's pod updates and deletions).
  const isPod = def.rule.resources.length === 1 && def.rule.resources[0] === 'pods';
  const objectSelector = isPod
    ? { matchExpressions: [{ key: LABEL_WEBHOOK_OPT_OUT, operator: 'NotIn', values: ['disabled'] }] }
    : mergeSelectors(def.objectSelector, def.clusterScoped ? options.clusterScopedObjectSelector : undefined);
  // The apiserver matches a Namespace's own labels against namespaceSelector: kube-system and the
  // agent's namespace stay out of the Namespace webhooks too.
  const selectsNamespace = !def.clusterScoped || def.rule.resources.includes('namespaces');
  return {
    name: def.name,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: def.failurePolicy ?? options.failurePolicy ?? 'Fail',
    matchPolicy: 'Equivalent',
    timeoutSeconds: options.timeoutSeconds,
    clientConfig,
    rules: [{ ...def.rule, scope: def.clusterScoped ? 'Cluster' : 'Namespaced' }],
    ...(selectsNamespace ? { namespaceSelector: namespaceSelectorFor(options) } : {}),
    ...(objectSelector ? { objectSelector } : {}),
    ...(def.type === 'mutating' ? { reinvocationPolicy: 'Never' as const } : {}),
  };
}

/** Both configurations, complete (ready for server-side apply). */
export function buildWebhookConfigurations(
  defs: readonly WebhookDefinition[],
  options: WebhookConfigurationOptions,
): { mutating: WebhookConfiguration; validating: WebhookConfiguration } {
  const of = (type: WebhookDefinition['type']): Webhook[] =>
    defs.filter((d) => d.type === type).map((d) => webhookOf(d, options));
  return {
    mutating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: options.mutatingName, labels: { 'app.kubernetes.io/managed-by': 'flotilla-agent' } },
      webhooks: of('mutating'),
    },
    validating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: options.validatingName, labels: { 'app.kubernetes.io/managed-by': 'flotilla-agent' } },
      webhooks: of('validating'),
    },
  };
}
