/** ObjectMeta rules kube-apiserver and OpenKruise's webhooks apply to every Kruise object. */
import { type FieldError, invalid, required } from '../../validation/field-error.js';
import { validateAnnotations, validateLabels } from '../../validation/labels.js';
import { dns1123LabelErrors, dns1123SubdomainErrors, finalizerNameErrors } from '../../validation/names.js';
import type { ObjectMeta } from './meta.js';

export interface MetadataRules {
  /** Extra rules for the name beyond the DNS-subdomain rule every custom resource has. */
  readonly nameRules?: (name: string) => string[];
}

/**
 * Name or generateName is required, names are DNS subdomains, labels, annotations and
 * finalizers are well formed. The namespace is optional here: the apiserver fills it from the
 * request for namespaced kinds and clears it for cluster-scoped ones.
 */
export function validateMetadata(metadata: ObjectMeta | undefined, rules: MetadataRules = {}): FieldError[] {
  const errors: FieldError[] = [];
  const meta = metadata ?? {};
  if (!meta.name && !meta.generateName) {
    errors.push(required('metadata.name', 'name or generateName is required'));
  }
  if (meta.name) {
    const messages = [...dns1123SubdomainErrors(meta.name), ...(rules.nameRules?.(meta.name) ?? [])];
    for (const m of messages) errors.push(invalid('metadata.name', meta.name, m));
  }
  if (meta.namespace) {
    for (const m of dns1123LabelErrors(meta.namespace)) errors.push(invalid('metadata.namespace', meta.namespace, m));
  }
  errors.push(...validateLabels(meta.labels ?? {}, 'metadata.labels'));
  errors.push(...validateAnnotations(meta.annotations ?? {}, 'metadata.annotations'));
  (meta.finalizers ?? []).forEach((finalizer, i) => {
    for (const m of finalizerNameErrors(finalizer)) errors.push(invalid(`metadata.finalizers[${i}]`, finalizer, m));
  });
  return errors;
}
