/**
 * CA bundle injection into webhook configurations the installer owns. With the Helm chart, the
 * chart creates the MutatingWebhookConfiguration and ValidatingWebhookConfiguration (rules,
 * selectors, failure policy, timeout come from its values, and `helm uninstall` removes them, so
 * a removed agent never leaves a failurePolicy Fail webhook behind). The agent only fills in each
 * webhook's `clientConfig.caBundle`, which the chart cannot know: the CA is generated at runtime.
 *
 * The write is a JSON patch of just those fields, each guarded by a `test` of the webhook's name
 * at its index, so a concurrent `helm upgrade` that reorders the list makes the patch fail (and
 * the next sync retry) instead of writing a bundle into someone else's webhook. Helm's three-way
 * merge leaves fields it never rendered alone, so an upgrade keeps the injected bundle.
 */
import { AgentError, isKubeStatus } from '../errors.js';
import { PatchType, type KubeRest } from '../runtime/rest.js';
import type { ResourceRef } from '../runtime/resource.js';

export interface InstalledConfiguration {
  webhooks?: { name: string; clientConfig?: { caBundle?: string } }[];
}

export type JsonPatchOperation = { op: 'test' | 'add'; path: string; value: string };

/**
 * The patch that makes every expected webhook carry `caBundle` (base64), empty when all do; and
 * the expected webhooks the configuration lacks (the chart and the agent disagree).
 */
export function planCaBundle(
  installed: InstalledConfiguration,
  expected: readonly string[],
  caBundle: string,
): { patch: JsonPatchOperation[]; missing: string[] } {
  const webhooks = installed.webhooks ?? [];
  const patch: JsonPatchOperation[] = [];
  webhooks.forEach((w, i) => {
    if (!expected.includes(w.name) || w.clientConfig?.caBundle === caBundle) return;
    patch.push(
      { op: 'test', path: `/webhooks/${i}/name`, value: w.name },
      { op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle },
    );
  });
  const missing = expected.filter((name) => !webhooks.some((w) => w.name === name));
  return { patch, missing };
}

/** Reads the configuration `name` and writes the bundle into the expected webhooks. */
export async function injectCaBundle(
  rest: KubeRest,
  ref: ResourceRef,
  name: string,
  expected: readonly string[],
  bundlePem: string,
): Promise<void> {
  const path = `/apis/${ref.group}/${ref.version}/${ref.plural}/${encodeURIComponent(name)}`;
  let installed: InstalledConfiguration;
  try {
    installed = await rest.request<InstalledConfiguration>({ method: 'GET', path });
  } catch (err) {
    const why = isKubeStatus(err, 404)
      ? `${ref.kind} ${name} does not exist; with FLOTILLA_WEBHOOK_MANAGE_CONFIGURATIONS=false the installer (the Helm chart) creates it`
      : `cannot read ${ref.kind} ${name}`;
    throw new AgentError('WEBHOOK_ERR_CONFIGURATION', why, { cause: err });
  }
  const { patch, missing } = planCaBundle(installed, expected, Buffer.from(bundlePem).toString('base64'));
  if (missing.length > 0) {
    throw new AgentError(
      'WEBHOOK_ERR_CONFIGURATION',
      `${ref.kind} ${name} lacks the webhook(s) ${missing.join(', ')} this agent serves; the chart and the agent versions disagree`,
    );
  }
  if (patch.length === 0) return;
  try {
    await rest.request({ method: 'PATCH', path, body: patch, contentType: PatchType.json });
  } catch (err) {
    throw new AgentError('WEBHOOK_ERR_CONFIGURATION', `cannot write the CA bundle into ${ref.kind} ${name}`, {
      cause: err,
    });
  }
}
