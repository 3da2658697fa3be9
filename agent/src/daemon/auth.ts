/**
 * Registry credentials from image pull secrets (`kubernetes.io/dockerconfigjson` and the legacy
 * `kubernetes.io/dockercfg`), matched to the registry of the image the way the kubelet's keyring
 * does: same host (Docker Hub under any of its names), optionally a path prefix, the most specific
 * entry first. Credentials never leave this module except inside the CRI request.
 */
import type { AuthConfig } from './cri/image-service.js';

/** A Secret as the daemon reads it: base64 values under `data`. */
export interface PullSecret {
  metadata?: { namespace?: string; name?: string };
  type?: string;
  data?: Record<string, string>;
}

interface DockerAuthEntry {
  username?: string;
  password?: string;
  auth?: string;
  identitytoken?: string;
  registrytoken?: string;
}

const DOCKER_HUB_ALIASES = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);

/** What a secret problem looks like to the user: which secret, and why it was skipped. */
export interface AuthProblem {
  secret: string;
  reason: string;
}

/**
 * The credentials in `secrets` that apply to `image` (a full reference), most specific first.
 * Unreadable secrets are reported in `problems` and skipped, so one bad secret does not stop
 * the pull.
 */
export function registryAuths(
  secrets: readonly PullSecret[],
  image: string,
): { auths: AuthConfig[]; problems: AuthProblem[] } {
  const target = splitImage(image);
  const found: { specificity: number; auth: AuthConfig }[] = [];
  const problems: AuthProblem[] = [];
  for (const secret of secrets) {
    const name = `${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`;
    let entries: Record<string, DockerAuthEntry>;
    try {
      entries = dockerEntries(secret);
    } catch (err) {
      problems.push({ secret: name, reason: err instanceof Error ? err.message : String(err) });
      continue;
    }
    for (const [key, entry] of Object.entries(entries)) {
      const specificity = matchKey(key, target);
      const auth = toAuthConfig(entry);
      if (specificity >= 0 && auth) found.push({ specificity, auth });
    }
  }
  found.sort((a, b) => b.specificity - a.specificity);
  return { auths: found.map((f) => f.auth), problems };
}

function dockerEntries(secret: PullSecret): Record<string, DockerAuthEntry> {
  const data = secret.data ?? {};
  if (data['.dockerconfigjson'] !== undefined) {
    const parsed = decodeJson(data['.dockerconfigjson'], '.dockerconfigjson') as {
      auths?: Record<string, DockerAuthEntry>;
    };
    return parsed.auths ?? {};
  }
  if (data['.dockercfg'] !== undefined) {
    return decodeJson(data['.dockercfg'], '.dockercfg') as Record<string, DockerAuthEntry>;
  }
  throw new Error('has neither .dockerconfigjson nor .dockercfg');
}

function decodeJson(base64: string, key: string): unknown {
  try {
    const value: unknown = JSON.parse(Buffer.from(base64, 'base64').toString('utf8'));
    if (value === null || typeof value !== 'object') throw new Error('not an object');
    return value;
  } catch {
    throw new Error(`${key} is not valid base64-encoded JSON`);
  }
}

/**
 * Only the credentials: containerd parses a serverAddress as a URL and rejects docker-config keys
 * such as `127.0.0.1:5000` ("first path segment in URL cannot contain colon"); kruise-daemon
 * leaves it out too, the runtime knows the registry from the image reference.
 */
function toAuthConfig(entry: DockerAuthEntry): AuthConfig | undefined {
  let { username, password } = entry;
  if (username === undefined && entry.auth) {
    const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) {
      username = decoded.slice(0, colon);
      password = decoded.slice(colon + 1);
    }
  }
  if (username === undefined && !entry.identitytoken && !entry.registrytoken) return undefined;
  return {
    ...(username !== undefined ? { username, password: password ?? '' } : {}),
    ...(entry.identitytoken ? { identityToken: entry.identitytoken } : {}),
    ...(entry.registrytoken ? { registryToken: entry.registrytoken } : {}),
  };
}

/** Host (Docker Hub normalized) and repository path of a full image reference. */
function splitImage(image: string): { host: string; path: string } {
  const name = image.split('@')[0]!.replace(/:[^:/]+$/, '');
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  if (slash < 0 || (!first.includes('.') && !first.includes(':') && first !== 'localhost')) {
    return { host: 'docker.io', path: slash < 0 ? `library/${name}` : name };
  }
  return { host: normalizeHost(first), path: name.slice(slash + 1) };
}

/** -1 when `key` does not apply; otherwise how specific it is (longer path prefix wins). */
function matchKey(key: string, target: { host: string; path: string }): number {
  const bare = key.replace(/^[a-z]+:\/\//i, '').replace(/\/+$/, '');
  const slash = bare.indexOf('/');
  const host = normalizeHost(slash < 0 ? bare : bare.slice(0, slash));
  let prefix = slash < 0 ? '' : bare.slice(slash + 1);
  // Docker Hub's classic key is https://index.docker.io/v1/: the /v1 is an API version, no path.
  if (host === 'docker.io' && /^v\d+$/.test(prefix)) prefix = '';
  if (host !== target.host) return -1;
  if (prefix && target.path !== prefix && !target.path.startsWith(`${prefix}/`)) return -1;
  return prefix.length;
}

function normalizeHost(host: string): string {
  const lower = host.toLowerCase();
  return DOCKER_HUB_ALIASES.has(lower) ? 'docker.io' : lower;
}
