/**
 * Reads the pull secrets a NodeImage entry lists. The daemon is only allowed to read secrets in
 * the daemon config namespace (the ImagePullJob controller copies them there); a secret that is
 * missing or forbidden is reported as a problem, not an error, so the pull still runs and fails
 * with the registry's own answer plus the reason the secret did not help.
 */
import { isKubeStatus } from '../errors.js';
import { resourcePath, Resources } from '../runtime/resource.js';
import type { KubeRest } from '../runtime/rest.js';
import type { AuthProblem, PullSecret } from './auth.js';

export interface SecretRefLike {
  namespace?: string;
  name?: string;
}

export interface SecretReader {
  read(refs: readonly SecretRefLike[]): Promise<{ secrets: PullSecret[]; problems: AuthProblem[] }>;
}

/** A SecretReader that GETs each secret from the API (pull secrets are few; no cache needed). */
export function kubeSecretReader(rest: KubeRest): SecretReader {
  return {
    async read(refs) {
      const secrets: PullSecret[] = [];
      const problems: AuthProblem[] = [];
      for (const ref of refs) {
        const key = `${ref.namespace ?? ''}/${ref.name ?? ''}`;
        try {
          secrets.push(
            await rest.request<PullSecret>({
              method: 'GET',
              path: resourcePath(Resources.secrets, ref.namespace, ref.name),
            }),
          );
        } catch (err) {
          if (isKubeStatus(err, 404)) problems.push({ secret: key, reason: 'not found' });
          else if (isKubeStatus(err, 403)) problems.push({ secret: key, reason: 'forbidden' });
          else throw err;
        }
      }
      return { secrets, problems };
    },
  };
}
