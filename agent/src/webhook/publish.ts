/**
 * Publishes the CA bundle the apiserver must trust to call the webhook. Either the agent owns
 * both webhook configurations and applies them whole (server-side apply under its own field
 * manager), or an installer (the Helm chart) owns them and only the bundle is written into them
 * (ca-bundle.ts). The CRDs converted by webhook get the same treatment for their conversion
 * `clientConfig` (conversion/crd-client-config.ts).
 */
import { AgentError } from '../errors.js';
import { PatchType, type KubeRest } from '../runtime/rest.js';
import { resourcePath, Resources, type ResourceRef } from '../runtime/resource.js';
import { injectCaBundle } from './ca-bundle.js';
import type { WebhookConfig } from './config.js';
import { buildWebhookConfigurations, type ClientConfigTarget, type WebhookConfiguration } from './configurations.js';
import { publishConversionClientConfig } from './conversion/crd-client-config.js';
import type { WebhookDefinition } from './registry.js';

const FIELD_MANAGER = 'flotilla-agent/webhook';

/** Resolves once the apiserver stored the bundle in both configurations. */
export type BundlePublisher = (bundlePem: string) => Promise<void>;

export function bundlePublisher(
  rest: KubeRest,
  config: WebhookConfig,
  definitions: readonly WebhookDefinition[],
): BundlePublisher {
  if (!config.manageConfigurations) {
    const names = (type: 'mutating' | 'validating'): string[] =>
      definitions.filter((d) => d.type === type).map((d) => d.name);
    return async (bundlePem) => {
      const { mutatingWebhookConfigurations: mutating, validatingWebhookConfigurations: validating } = Resources;
      await injectCaBundle(rest, mutating, config.mutatingConfigurationName, names('mutating'), bundlePem);
      await injectCaBundle(rest, validating, config.validatingConfigurationName, names('validating'), bundlePem);
      if (config.publishConversion) await publishConversionClientConfig(rest, undefined, bundlePem);
    };
  }
  const target: ClientConfigTarget = config.url
    ? { kind: 'url', baseUrl: config.url }
    : { kind: 'service', namespace: config.namespace, name: config.serviceName, port: config.servicePort };
  return async (bundlePem) => {
    const { mutating, validating } = buildWebhookConfigurations(definitions, {
      mutatingName: config.mutatingConfigurationName,
      validatingName: config.validatingConfigurationName,
      target,
      caBundlePem: bundlePem,
      timeoutSeconds: config.timeoutSeconds,
      agentNamespace: config.namespace,
      namespaceSelector: config.namespaceSelector,
      clusterScopedObjectSelector: config.clusterScopedObjectSelector,
      failurePolicy: config.failurePolicy,
    });
    await apply(rest, mutating, Resources.mutatingWebhookConfigurations);
    await apply(rest, validating, Resources.validatingWebhookConfigurations);
    if (config.publishConversion) await publishConversionClientConfig(rest, target, bundlePem);
  };
}

async function apply(rest: KubeRest, obj: WebhookConfiguration, ref: ResourceRef): Promise<void> {
  try {
    await rest.request({
      method: 'PATCH',
      path: resourcePath(ref, undefined, obj.metadata?.name),
      query: { fieldManager: FIELD_MANAGER, force: true },
      body: obj,
      contentType: PatchType.apply,
    });
  } catch (err) {
    throw new AgentError('WEBHOOK_ERR_CONFIGURATION', `cannot apply ${ref.kind} ${obj.metadata?.name}`, {
      cause: err,
    });
  }
}
