/**
 * FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES: where the ImagePullJob controller may read pull
 * secrets. Unset or `*`: every namespace (OpenKruise's behaviour; needs cluster-wide read access
 * to Secrets). Otherwise a comma-separated list, possibly empty: the controller watches Secrets
 * only there (and in the daemon config namespace), so namespaced Roles are all it needs; the Helm
 * chart sets it from imagePullJob.pullSecretNamespaces and grants exactly that.
 */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
export const PULL_SECRET_NAMESPACES_ENV = 'FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES';

/** The listed namespaces, or undefined for all; problems are pushed to `problems`. */
export function pullSecretNamespacesFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  problems: string[],
): string[] | undefined {
  const raw = env[PULL_SECRET_NAMESPACES_ENV];
  if (raw === undefined || raw.trim() === '*') return undefined;
  const names = raw
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  for (const n of names) {
    if (!DNS_LABEL.test(n)) problems.push(`${PULL_SECRET_NAMESPACES_ENV}: "${n}" is not a namespace name`);
  }
  return names;
}
