/**
 * Turns the agent's `--kubeconfig` (or, without one, the pod's service account) into the
 * credentials its REST client uses. Contexts that need a plugin (`exec`, `auth-provider`) or a
 * proxy are handed to @kubernetes/client-node, loaded only then: it runs those plugins and builds
 * the proxy agents; everything else stays on StaticKubeConfig.
 */
import { readFileSync } from 'node:fs';
import { AgentError } from '../../errors.js';
import { parseKubeconfig } from './parse.js';
import { inClusterContext, StaticKubeConfig } from './static-config.js';
import type { KubeCredentials } from './types.js';

export interface LoadedCredentials {
  credentials: KubeCredentials;
  /** Why client-node was loaded (its plugins or proxies are needed), undefined when it was not. */
  delegatedBecause?: string;
}

/** `env`: the process environment, read by the caller (KUBERNETES_SERVICE_HOST/PORT in a pod). */
export async function loadKubeCredentials(
  kubeconfig: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<LoadedCredentials> {
  if (kubeconfig === undefined) {
    try {
      return { credentials: new StaticKubeConfig(inClusterContext(env)) };
    } catch (err) {
      throw new AgentError('AGENT_ERR_CONFIG', err instanceof Error ? err.message : String(err), { cause: err });
    }
  }
  let text: string;
  try {
    text = readFileSync(kubeconfig, 'utf8');
  } catch (err) {
    throw new AgentError('AGENT_ERR_CONFIG', `kubeconfig ${kubeconfig}: cannot read: ${(err as Error).message}`);
  }
  const context = parseKubeconfig(text, kubeconfig);
  const delegatedBecause = context.user.plugin
    ? `users[${context.user.name}].user.${context.user.plugin}`
    : context.cluster.proxyUrl
      ? `clusters[${context.cluster.name}].cluster.proxy-url`
      : undefined;
  if (!delegatedBecause) return { credentials: new StaticKubeConfig(context) };
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return { credentials: kc, delegatedBecause };
}
