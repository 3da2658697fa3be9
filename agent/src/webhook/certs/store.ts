/**
 * The certificate Secret in the agent's namespace, read and written with optimistic concurrency:
 * a write carries the resourceVersion it read, so two replicas rotating at once cannot overwrite
 * each other; the loser gets `conflict` and re-reads on its next sync.
 */
import { AgentError, isKubeStatus } from '../../errors.js';
import { resourcePath, Resources } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';

export interface StoredSecret {
  resourceVersion: string;
  data: Record<string, string>;
  annotations: Record<string, string>;
}

export interface SecretStore {
  read(): Promise<StoredSecret | undefined>;
  /** Creates (no resourceVersion) or replaces the Secret; 'conflict' when someone else wrote first. */
  write(
    data: Record<string, string>,
    annotations: Record<string, string>,
    resourceVersion: string | undefined,
  ): Promise<'ok' | 'conflict'>;
}

interface SecretObject {
  metadata?: { resourceVersion?: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
}

/** A SecretStore over the raw API. Errors never include the Secret's data. */
export function kubeSecretStore(rest: KubeRest, namespace: string, name: string): SecretStore {
  return {
    async read() {
      try {
        const s = await rest.request<SecretObject>({
          method: 'GET',
          path: resourcePath(Resources.secrets, namespace, name),
        });
        return {
          resourceVersion: s.metadata?.resourceVersion ?? '',
          data: s.data ?? {},
          annotations: s.metadata?.annotations ?? {},
        };
      } catch (err) {
        if (isKubeStatus(err, 404)) return undefined;
        throw new AgentError('WEBHOOK_ERR_CERT_STORE', `cannot read Secret ${namespace}/${name}`, { cause: err });
      }
    },
    async write(data, annotations, resourceVersion) {
      const body = {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'Opaque',
        metadata: {
          name,
          namespace,
          annotations,
          labels: { 'app.kubernetes.io/managed-by': 'flotilla-agent' },
          ...(resourceVersion ? { resourceVersion } : {}),
        },
        data,
      };
      try {
        await (resourceVersion
          ? rest.request({ method: 'PUT', path: resourcePath(Resources.secrets, namespace, name), body })
          : rest.request({ method: 'POST', path: resourcePath(Resources.secrets, namespace), body }));
        return 'ok';
      } catch (err) {
        if (isKubeStatus(err, 409)) return 'conflict';
        throw new AgentError('WEBHOOK_ERR_CERT_STORE', `cannot write Secret ${namespace}/${name}`, { cause: err });
      }
    },
  };
}
