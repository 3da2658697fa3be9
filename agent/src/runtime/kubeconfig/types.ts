import type https from 'node:https';

/** The cluster of the current context, as the REST client reads it. */
export interface KubeCluster {
  readonly server: string;
  /** Set when the cluster is reached through an HTTP(S) or SOCKS proxy. */
  readonly proxyUrl?: string;
}

/**
 * What the agent's REST client needs of a kubeconfig. @kubernetes/client-node's KubeConfig has
 * this shape, and so has StaticKubeConfig (static-config.ts), which covers what agents run with
 * (in-cluster service accounts, certificates, tokens) without loading client-node: its generated
 * API alone keeps about 65 MiB resident in each process (test/bench/kruise/README.md).
 *
 * getCurrentCluster() and getCurrentUser() return the same objects until the current context
 * changes: callers cache TLS material by their identity (kube-options.ts).
 */
export interface KubeCredentials {
  getCurrentCluster(): KubeCluster | null;
  getCurrentUser(): unknown;
  /**
   * TLS material, static headers and the Authorization header of the current context. An
   * implementation may also have `applyAuthorizationHeader(opts)`, only the credentials that
   * rotate; kube-options.ts then applies the rest less often (client-node's is private, so it is
   * not part of this type).
   */
  applyToHTTPSOptions(opts: https.RequestOptions): Promise<void>;
}
