/**
 * Kubernetes name and key formats (k8s.io/apimachinery/pkg/util/validation). Each check returns
 * the list of problems as messages, empty when the value is fine, so callers attach the field path.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const IANA_SVC_NAME = /^[-a-z0-9]+$/;

export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
export const QUALIFIED_NAME_MAX_LENGTH = 63;
export const LABEL_VALUE_MAX_LENGTH = 63;

/** A DNS-1123 label: container names, port-less volume names, namespace names. */
export function dns1123LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > DNS1123_LABEL_MAX_LENGTH)
    errors.push(`must be no more than ${DNS1123_LABEL_MAX_LENGTH} characters`);
  if (!DNS1123_LABEL.test(value)) {
    errors.push(
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')",
    );
  }
  return errors;
}

/** A DNS-1123 subdomain: object names of most kinds, label-key prefixes. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX_LENGTH) {
    errors.push(`must be no more than ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`);
  }
  if (!DNS1123_SUBDOMAIN.test(value)) {
    errors.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')",
    );
  }
  return errors;
}

/** A qualified name, `[prefix/]name`: label and annotation keys, finalizers, selector keys. */
export function qualifiedNameErrors(value: string): string[] {
  const parts = value.split('/');
  let name: string;
  const errors: string[] = [];
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else errors.push(...dns1123SubdomainErrors(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errors.push('name part must be non-empty');
  else if (name.length > QUALIFIED_NAME_MAX_LENGTH) {
    errors.push(`name part must be no more than ${QUALIFIED_NAME_MAX_LENGTH} characters`);
  }
  if (name.length > 0 && !QUALIFIED_NAME_PART.test(name)) {
    errors.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc')",
    );
  }
  return errors;
}

/** A label value: empty, or up to 63 alphanumerics with '-', '_' and '.' inside. */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > LABEL_VALUE_MAX_LENGTH) errors.push(`must be no more than ${LABEL_VALUE_MAX_LENGTH} characters`);
  if (!LABEL_VALUE.test(value)) {
    errors.push(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', or 'my_value', or '12345')",
    );
  }
  return errors;
}

/** An IANA service name: named container ports. */
export function ianaServiceNameErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 15) errors.push('must be no more than 15 characters');
  if (!IANA_SVC_NAME.test(value)) errors.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (value.includes('--')) errors.push('must not contain consecutive hyphens');
  if (!/[a-z]/.test(value)) errors.push('must contain at least one letter (a-z)');
  if (value.startsWith('-') || value.endsWith('-')) errors.push('must not begin or end with a hyphen');
  return errors;
}

/** Finalizers Kubernetes itself defines; all others must carry a domain prefix. */
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** A finalizer name as kube-apiserver accepts it on objects such as pods. */
export function finalizerNameErrors(value: string): string[] {
  const errors = qualifiedNameErrors(value);
  if (errors.length === 0 && !value.includes('/') && !STANDARD_FINALIZERS.has(value)) {
    errors.push('name is neither a standard finalizer name nor is it fully qualified');
  }
  return errors;
}
