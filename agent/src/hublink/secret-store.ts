/**
 * The join state kept in a Secret in the agent's namespace, so that a restarted agent (or a new
 * leader replica) resumes a pending registration or reconnects with the credentials it claimed,
 * instead of registering again — claiming is one-time, the hub never hands credentials out twice.
 *
 * Layout: `data.seed` (the cluster's user nkey seed: it never leaves the cluster),
 * `data.registrationSecret` (the one-time registration secret) and `data.credentials`
 * (AgentCredentials as JSON: the user JWT, renewed before it expires). Errors name the Secret,
 * never its contents.
 */
import type { AgentCredentials } from '@flotilla/api';
import { AgentError, isKubeStatus } from '../errors.js';
import { resourcePath, Resources } from '../runtime/resource.js';
import type { KubeRest } from '../runtime/rest.js';
import type { CredentialStore, JoinState } from './registration.js';

interface SecretBody {
  metadata?: { resourceVersion?: string };
  data?: Record<string, string>;
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | undefined): string | undefined =>
  s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8');

function isCredentials(v: unknown): v is AgentCredentials {
  const c = v as AgentCredentials | undefined;
  const n = c?.nats;
  return (
    typeof c?.cluster === 'string' &&
    Array.isArray(n?.servers) &&
    n.servers.every((s) => typeof s === 'string') &&
    [n.jwt, n.expiresAt, n.inboxPrefix, n.apiPrefix, n.desiredStream, n.consumer].every((s) => typeof s === 'string')
  );
}

/** Reads the state; unreadable credentials count as absent (the agent then cannot rejoin silently). */
function decodeState(data: Record<string, string>): JoinState {
  const state: JoinState = {};
  const seed = unb64(data['seed']);
  if (seed) state.seed = seed;
  const registrationSecret = unb64(data['registrationSecret']);
  if (registrationSecret) state.registrationSecret = registrationSecret;
  const raw = unb64(data['credentials']);
  if (raw) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = undefined;
    }
    if (isCredentials(parsed)) state.credentials = parsed;
  }
  return state;
}

/** A CredentialStore over the Secret `namespace/name`, written with optimistic concurrency. */
export function secretCredentialStore(rest: KubeRest, namespace: string, name: string): CredentialStore {
  const what = `Secret ${namespace}/${name}`;
  let resourceVersion: string | undefined;
  async function read(): Promise<SecretBody | undefined> {
    try {
      return await rest.request<SecretBody>({ method: 'GET', path: resourcePath(Resources.secrets, namespace, name) });
    } catch (err) {
      if (isKubeStatus(err, 404)) return undefined;
      throw new AgentError('AGENT_ERR_JOIN_SECRET', `cannot read ${what}`, { cause: err });
    }
  }
  return {
    async load() {
      const s = await read();
      resourceVersion = s?.metadata?.resourceVersion;
      return s ? decodeState(s.data ?? {}) : undefined;
    },
    async save(state) {
      const data: Record<string, string> = {};
      if (state.seed) data['seed'] = b64(state.seed);
      if (state.registrationSecret) data['registrationSecret'] = b64(state.registrationSecret);
      if (state.credentials) data['credentials'] = b64(JSON.stringify(state.credentials));
      const body = {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'Opaque',
        metadata: {
          name,
          namespace,
          labels: { 'app.kubernetes.io/managed-by': 'flotilla-agent', 'app.kubernetes.io/component': 'hub-link' },
          ...(resourceVersion ? { resourceVersion } : {}),
        },
        data,
      };
      try {
        const saved = await (resourceVersion
          ? rest.request<SecretBody>({ method: 'PUT', path: resourcePath(Resources.secrets, namespace, name), body })
          : rest.request<SecretBody>({ method: 'POST', path: resourcePath(Resources.secrets, namespace), body }));
        resourceVersion = saved.metadata?.resourceVersion;
      } catch (err) {
        // A conflict means another writer (a former leader) got there first: losing the claimed
        // credentials would be unrecoverable without an admin, so fail loudly rather than overwrite.
        throw new AgentError('AGENT_ERR_JOIN_SECRET', `cannot write ${what}`, { cause: err });
      }
    },
  };
}
