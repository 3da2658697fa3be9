import { encodeGoTyped } from './typedJson.js';

/**
 * The pod template as OpenKruise sees it after decoding into corev1.PodTemplateSpec and encoding
 * again, as a plain JSON object: what its revision data is made of.
 *
 * Covered: every field of PodTemplateSpec in k8s.io/api v0.30.10 (the version OpenKruise v1.8
 * builds with), from the generated table goStructs.generated.ts: metadata (creationTimestamp
 * becomes null when unset, times move to UTC whole seconds), containers, initContainers and
 * ephemeralContainers with resources (always present, `{}` when empty), ports, env, envFrom,
 * volumeMounts, probes, lifecycle, securityContext; volumes of every source; affinity,
 * tolerations, topology spread, DNS, scheduling gates, resource claims and the rest of PodSpec.
 * Unknown fields (including fields newer than v0.30) are dropped, as Kruise v1.8 drops them;
 * quantities are canonicalised; omitempty fields vanish when empty; integers must be integers.
 *
 * Not covered: defaulting. OpenKruise hashes the template as stored, after its webhook applied
 * the PodSpec defaults; pass the defaulted template.
 *
 * Throws GoDecodeError naming the field where Go's decoder would fail.
 */
export function normalizePodTemplateForRevision(template: unknown): Record<string, unknown> {
  return JSON.parse(encodeGoTyped('core.PodTemplateSpec', template)) as Record<string, unknown>;
}
