/**
 * The kubeconfig applied to every request, cheaply. @kubernetes/client-node's
 * applyToHTTPSOptions reads the CA, client certificate and key files and builds an https.Agent
 * on each call (about 50 µs with file-based TLS, as in-cluster); the credentials in headers are
 * what must be fresh per request (token files, exec plugins, OIDC refreshes).
 */
import type https from 'node:https';
import type { KubeCredentials } from './kubeconfig/index.js';

/** The request options the TLS material lives in. */
export const TLS_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

type Snapshot = Pick<https.RequestOptions, (typeof TLS_KEYS)[number] | 'auth'> & {
  headers: Record<string, string | number | string[]>;
};

/** client-node's own per-request credential step (tokens, auth providers, exec plugins). */
type ApplyAuthorization = (opts: https.RequestOptions) => Promise<void>;

export interface KubeOptionsApplier {
  /** Fills TLS material, credentials and headers of the current context into `opts`. */
  apply(opts: https.RequestOptions): Promise<void>;
}

/**
 * Applies `kc` to requests: TLS material (and the user's static headers) are read through
 * applyToHTTPSOptions at most every `tlsRefreshMs` and whenever the current cluster or user
 * changes; the Authorization header is applied on every request by client-node's own
 * credential step. `tlsRefreshMs` 0 applies everything on every request, as does a client-node
 * without that step.
 */
export function kubeOptionsApplier(
  kc: KubeCredentials,
  tlsRefreshMs: number,
  now: () => number = Date.now,
): KubeOptionsApplier {
  const step = (kc as unknown as { applyAuthorizationHeader?: ApplyAuthorization }).applyAuthorizationHeader;
  const applyAuthorization = typeof step === 'function' ? step.bind(kc) : undefined;
  let cached: { at: number; cluster: unknown; user: unknown; snapshot: Snapshot } | undefined;

  const full = async (opts: https.RequestOptions): Promise<void> => {
    await kc.applyToHTTPSOptions(opts);
    // Its Agent is never used: connections are pooled by the caller.
    delete opts.agent;
  };

  return {
    async apply(opts) {
      const cluster = kc.getCurrentCluster();
      const user = kc.getCurrentUser();
      const t = now();
      if (
        !applyAuthorization ||
        !cached ||
        cached.cluster !== cluster ||
        cached.user !== user ||
        t - cached.at >= tlsRefreshMs
      ) {
        await full(opts);
        const snapshot: Snapshot = { headers: { ...(opts.headers as Snapshot['headers']) }, auth: opts.auth };
        for (const k of TLS_KEYS) if (opts[k] !== undefined) Object.assign(snapshot, { [k]: opts[k] });
        // The credential step rewrites Authorization per request; the rest of the headers are the user's.
        delete snapshot.headers.Authorization;
        cached = { at: t, cluster, user, snapshot };
        return;
      }
      const { headers, ...rest } = cached.snapshot;
      Object.assign(opts, rest);
      opts.headers = { ...(opts.headers as Snapshot['headers']), ...headers };
      await applyAuthorization(opts);
    },
  };
}
