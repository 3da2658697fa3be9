/**
 * Credentials of one kubeconfig context that need no plugin: CA, client certificate and key
 * (inline or files, files re-read on every call so rotated ones are picked up), a bearer token
 * or a token file (re-read once a minute, as client-go does for projected service account
 * tokens), basic auth, impersonation, insecure-skip-tls-verify and tls-server-name.
 */
import { readFileSync } from 'node:fs';
import type https from 'node:https';
import net from 'node:net';
import type { ClusterEntry, KubeconfigContext, Material, UserEntry } from './parse.js';
import type { KubeCluster, KubeCredentials } from './types.js';

/** How long a token read from a file is used before the file is read again. */
export const TOKEN_FILE_REREAD_MS = 60_000;

/** Where a pod's service account credentials are mounted. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface StaticKubeConfigDeps {
  readFile?: (file: string) => Buffer;
  now?: () => number;
}

export class StaticKubeConfig implements KubeCredentials {
  readonly #cluster: ClusterEntry & KubeCluster;
  readonly #user: UserEntry;
  readonly #readFile: (file: string) => Buffer;
  readonly #now: () => number;
  #token: { value: string; readAt: number } | undefined;

  constructor(context: KubeconfigContext, deps: StaticKubeConfigDeps = {}) {
    this.#cluster = context.cluster;
    this.#user = context.user;
    this.#readFile = deps.readFile ?? ((file) => readFileSync(file));
    this.#now = deps.now ?? Date.now;
  }

  getCurrentCluster(): KubeCluster {
    return this.#cluster;
  }

  getCurrentUser(): unknown {
    return this.#user;
  }

  async applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    const c = this.#cluster;
    const u = this.#user;
    if (c.insecureSkipTlsVerify) opts.rejectUnauthorized = false;
    if (c.tlsServerName) opts.servername = c.tlsServerName;
    if (c.ca) opts.ca = this.#bytes(c.ca);
    if (u.cert) opts.cert = this.#bytes(u.cert);
    if (u.key) opts.key = this.#bytes(u.key);
    if (u.username !== undefined) opts.auth = `${u.username}:${u.password ?? ''}`;
    if (u.impersonate !== undefined) opts.headers = { ...opts.headers, 'Impersonate-User': u.impersonate };
    await this.applyAuthorizationHeader(opts);
  }

  applyAuthorizationHeader(opts: https.RequestOptions): Promise<void> {
    const token = this.#bearer();
    if (token !== undefined) opts.headers = { ...opts.headers, Authorization: `Bearer ${token}` };
    return Promise.resolve();
  }

  #bearer(): string | undefined {
    const u = this.#user;
    if (u.token !== undefined) return u.token;
    if (u.tokenFile === undefined) return undefined;
    const t = this.#now();
    if (!this.#token || t - this.#token.readAt >= TOKEN_FILE_REREAD_MS) {
      this.#token = { value: this.#readFile(u.tokenFile).toString('utf8').trim(), readAt: t };
    }
    return this.#token.value;
  }

  #bytes(m: Material): Buffer {
    return 'data' in m ? m.data : this.#readFile(m.file);
  }
}

/**
 * The context a pod's service account gives: the apiserver at KUBERNETES_SERVICE_HOST/PORT (http
 * on the insecure ports client-go also treats so), the mounted CA and the rotating token.
 */
export function inClusterContext(
  env: Readonly<Record<string, string | undefined>>,
  dir: string = SERVICE_ACCOUNT_DIR,
): KubeconfigContext {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port) {
    throw new Error('in-cluster credentials need KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT');
  }
  const scheme = ['80', '8080', '8001'].includes(port) ? 'http' : 'https';
  const server = `${scheme}://${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
  return {
    context: 'in-cluster',
    cluster: { name: 'in-cluster', server, ca: { file: `${dir}/ca.crt` }, insecureSkipTlsVerify: false },
    user: { name: 'service-account', tokenFile: `${dir}/token` },
  };
}
