/**
 * Points the CRDs converted by webhook (SidecarSet) at this agent's `/convert` and writes the CA
 * bundle there, as OpenKruise's manager does for its CRDs. Where the agent owns its webhook
 * configurations, it writes the whole `clientConfig` (Service or URL, path, bundle); where an
 * installer owns them (the Helm chart renders the CRD's Service), only the bundle. The write is a
 * JSON merge patch of those fields, sent only when they differ, so replicas syncing at once agree.
 * A CRD whose strategy is not Webhook (CRDs from before v1beta1) is left alone.
 */
import { CONVERSION_REVIEW_VERSIONS, CONVERSION_WEBHOOK_PATH, CRD_DEFINITIONS, jsonEqual } from '@flotilla/api';
import { AgentError, isKubeStatus } from '../../errors.js';
import { PatchType, type KubeRest } from '../../runtime/rest.js';
import { resourcePath, Resources } from '../../runtime/resource.js';
import type { ClientConfigTarget } from '../configurations.js';

interface ClientConfig {
  service?: { namespace: string; name: string; path?: string; port?: number } | null;
  url?: string | null;
  caBundle?: string;
}

export interface InstalledCrd {
  spec?: { conversion?: { strategy?: string; webhook?: { clientConfig?: ClientConfig } } };
}

/** The CRDs whose definition converts by webhook, by name. */
export const CONVERTED_CRDS: readonly string[] = CRD_DEFINITIONS.filter((d) => d.conversion === 'Webhook').map(
  (d) => `${d.plural}.${d.group}`,
);

/** The clientConfig the agent wants: `target` with the bundle, or the bundle alone (`target` undefined). */
function wanted(target: ClientConfigTarget | undefined, caBundle: string): ClientConfig {
  if (!target) return { caBundle };
  if (target.kind === 'url') {
    return { url: `${target.baseUrl.replace(/\/$/, '')}${CONVERSION_WEBHOOK_PATH}`, service: null, caBundle };
  }
  const { namespace, name, port } = target;
  return { service: { namespace, name, port, path: CONVERSION_WEBHOOK_PATH }, url: null, caBundle };
}

/** The merge patch that makes `installed` call the agent with `caBundle` (base64); undefined when it does. */
export function planConversionClientConfig(
  installed: InstalledCrd,
  target: ClientConfigTarget | undefined,
  caBundle: string,
): object | undefined {
  const conversion = installed.spec?.conversion;
  if (conversion?.strategy !== 'Webhook') return undefined;
  const want = wanted(target, caBundle);
  const have = conversion.webhook?.clientConfig ?? {};
  const differs = Object.entries(want).some(
    ([key, value]) => !jsonEqual(have[key as keyof ClientConfig] ?? null, value),
  );
  if (!differs) return undefined;
  return {
    spec: {
      conversion: { webhook: { clientConfig: want, conversionReviewVersions: [...CONVERSION_REVIEW_VERSIONS] } },
    },
  };
}

/** Reads each converted CRD and writes the client config into it when needed. */
export async function publishConversionClientConfig(
  rest: KubeRest,
  target: ClientConfigTarget | undefined,
  bundlePem: string,
): Promise<void> {
  const caBundle = Buffer.from(bundlePem).toString('base64');
  for (const name of CONVERTED_CRDS) {
    const path = resourcePath(Resources.customResourceDefinitions, undefined, name);
    let installed: InstalledCrd;
    try {
      installed = await rest.request<InstalledCrd>({ method: 'GET', path });
    } catch (err) {
      const why = isKubeStatus(err, 404) ? `CRD ${name} is not installed` : `cannot read CRD ${name}`;
      throw new AgentError('WEBHOOK_ERR_CONFIGURATION', why, { cause: err });
    }
    const patch = planConversionClientConfig(installed, target, caBundle);
    if (!patch) continue;
    try {
      await rest.request({ method: 'PATCH', path, body: patch, contentType: PatchType.merge });
    } catch (err) {
      throw new AgentError('WEBHOOK_ERR_CONFIGURATION', `cannot write the conversion webhook into CRD ${name}`, {
        cause: err,
      });
    }
  }
}
