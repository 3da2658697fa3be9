/**
 * Reads a kubeconfig document (the clientcmd v1 `Config` kubectl writes) down to the one context
 * the agent uses: its current context, or the one named. Every problem is an AGENT_ERR_CONFIG
 * naming the field, e.g. `kubeconfig /etc/kc: users[admin].user.client-key: missing beside
 * client-certificate`.
 */
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { AgentError } from '../../errors.js';

/** Bytes given inline (`*-data`, base64) or read from a file each time they are needed. */
export type Material = { readonly file: string } | { readonly data: Buffer };

export interface ClusterEntry {
  readonly name: string;
  readonly server: string;
  readonly ca?: Material;
  readonly insecureSkipTlsVerify: boolean;
  readonly tlsServerName?: string;
  readonly proxyUrl?: string;
}

export interface UserEntry {
  readonly name: string;
  readonly cert?: Material;
  readonly key?: Material;
  readonly token?: string;
  readonly tokenFile?: string;
  readonly username?: string;
  readonly password?: string;
  /** `as`: the user every request impersonates. */
  readonly impersonate?: string;
  /** Credentials a plugin produces (`exec`, `auth-provider`): the static reader does not run them. */
  readonly plugin?: 'exec' | 'auth-provider';
}

export interface KubeconfigContext {
  readonly context: string;
  readonly cluster: ClusterEntry;
  readonly user: UserEntry;
}

type Doc = Record<string, unknown>;

export function kubeconfigError(source: string, field: string, problem: string): AgentError {
  return new AgentError('AGENT_ERR_CONFIG', `kubeconfig ${source}: ${field}: ${problem}`);
}

/**
 * The context `contextName` (default: `current-context`) of the kubeconfig `text` read from
 * `source`; relative file paths are resolved against the file's directory, as kubectl does.
 */
export function parseKubeconfig(text: string, source: string, contextName?: string): KubeconfigContext {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw kubeconfigError(source, '(document)', `not YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isObject(doc)) throw kubeconfigError(source, '(document)', 'not a mapping');
  const dir = path.dirname(source);
  const name = contextName ?? optionalString(doc, 'current-context', source, 'current-context');
  if (!name) throw kubeconfigError(source, 'current-context', 'not set');
  const context = named(doc, 'contexts', 'context', name, source);
  const clusterName = requiredString(context.body, 'cluster', source, `contexts[${name}].context.cluster`);
  const userName = optionalString(context.body, 'user', source, `contexts[${name}].context.user`);
  const cluster = readCluster(named(doc, 'clusters', 'cluster', clusterName, source), dir, source);
  const user = userName ? readUser(named(doc, 'users', 'user', userName, source), dir, source) : { name: '' };
  return { context: name, cluster, user };
}

function readCluster(entry: Named, dir: string, source: string): ClusterEntry {
  const at = `clusters[${entry.name}].cluster`;
  const b = entry.body;
  const server = requiredString(b, 'server', source, `${at}.server`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw kubeconfigError(source, `${at}.server`, `"${server}" is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw kubeconfigError(source, `${at}.server`, `scheme ${url.protocol} is not http or https`);
  }
  const insecure = b['insecure-skip-tls-verify'];
  if (insecure !== undefined && typeof insecure !== 'boolean') {
    throw kubeconfigError(source, `${at}.insecure-skip-tls-verify`, 'must be true or false');
  }
  return {
    name: entry.name,
    server,
    ca: material(b, 'certificate-authority', dir, source, at),
    insecureSkipTlsVerify: insecure === true,
    tlsServerName: optionalString(b, 'tls-server-name', source, `${at}.tls-server-name`),
    proxyUrl: optionalString(b, 'proxy-url', source, `${at}.proxy-url`),
  };
}

function readUser(entry: Named, dir: string, source: string): UserEntry {
  const at = `users[${entry.name}].user`;
  const b = entry.body;
  const cert = material(b, 'client-certificate', dir, source, at);
  const key = material(b, 'client-key', dir, source, at);
  if (cert && !key) throw kubeconfigError(source, `${at}.client-key`, 'missing beside client-certificate');
  if (key && !cert) throw kubeconfigError(source, `${at}.client-certificate`, 'missing beside client-key');
  const tokenFile = optionalString(b, 'tokenFile', source, `${at}.tokenFile`);
  const username = optionalString(b, 'username', source, `${at}.username`);
  const password = optionalString(b, 'password', source, `${at}.password`);
  if (password !== undefined && username === undefined) {
    throw kubeconfigError(source, `${at}.username`, 'missing beside password');
  }
  const plugin = b['exec'] !== undefined ? 'exec' : b['auth-provider'] !== undefined ? 'auth-provider' : undefined;
  return {
    name: entry.name,
    cert,
    key,
    token: optionalString(b, 'token', source, `${at}.token`),
    tokenFile: tokenFile === undefined ? undefined : resolve(dir, tokenFile),
    username,
    password,
    impersonate: optionalString(b, 'as', source, `${at}.as`),
    plugin,
  };
}

interface Named {
  name: string;
  body: Doc;
}

/** The entry called `name` of the list `list` (`[{name, <key>: {...}}]`). */
function named(doc: Doc, list: string, key: string, name: string, source: string): Named {
  const entries = doc[list];
  if (entries !== undefined && entries !== null && !Array.isArray(entries)) {
    throw kubeconfigError(source, list, 'not a list');
  }
  const found = (entries ?? []).find((e: unknown) => isObject(e) && e['name'] === name) as Doc | undefined;
  if (!found) throw kubeconfigError(source, list, `no entry named "${name}"`);
  const body = found[key] ?? {};
  if (!isObject(body)) throw kubeconfigError(source, `${list}[${name}].${key}`, 'not a mapping');
  return { name, body };
}

/** `<field>-data` (base64) or `<field>` (a path); both set is refused, as kubectl does. */
function material(b: Doc, field: string, dir: string, source: string, at: string): Material | undefined {
  const file = optionalString(b, field, source, `${at}.${field}`);
  const data = optionalString(b, `${field}-data`, source, `${at}.${field}-data`);
  if (file !== undefined && data !== undefined) {
    throw kubeconfigError(source, `${at}.${field}-data`, `set together with ${field}; keep one`);
  }
  if (data !== undefined) {
    const bytes = Buffer.from(data, 'base64');
    if (
      bytes.length === 0 ||
      bytes.toString('base64').replace(/=+$/, '') !== data.replace(/\s/g, '').replace(/=+$/, '')
    ) {
      throw kubeconfigError(source, `${at}.${field}-data`, 'not base64');
    }
    return { data: bytes };
  }
  return file === undefined ? undefined : { file: resolve(dir, file) };
}

function resolve(dir: string, file: string): string {
  return path.isAbsolute(file) ? file : path.join(dir, file);
}

function optionalString(b: Doc, key: string, source: string, field: string): string | undefined {
  const v = b[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw kubeconfigError(source, field, 'must be a string');
  return v;
}

function requiredString(b: Doc, key: string, source: string, field: string): string {
  const v = optionalString(b, key, source, field);
  if (v === undefined) throw kubeconfigError(source, field, 'required');
  return v;
}

function isObject(v: unknown): v is Doc {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
