/**
 * nats-server's operator-mode settings (docs/adr/0012), the same on every node: the operator JWT,
 * the system account, a `full` resolver (every node stores every account JWT and exchanges them
 * with its peers every 2 minutes; deletions allowed, so a removed cluster's account goes away)
 * and the SYS and HUB account JWTs preloaded. Cluster accounts are never here: the hub pushes
 * them at run time. Used by the local command's server and by `flotilla-hub nats-setup`.
 */
export interface OperatorModeServer {
  operatorJwt: string;
  /** The SYS account's public key. */
  systemAccount: string;
  /** Account public key → account JWT. */
  preload: Record<string, string>;
}

// NATS config strings are JSON-compatible, so JSON.stringify quotes them safely.
const q = (s: string): string => JSON.stringify(s);

/** The config lines; `resolverDir` is where the node keeps the account JWTs (persistent). */
export function operatorModeLines(auth: OperatorModeServer, resolverDir: string): string[] {
  return [
    `operator: ${q(auth.operatorJwt)}`,
    `system_account: ${auth.systemAccount}`,
    `resolver { type: full, dir: ${q(resolverDir)}, allow_delete: true, interval: "2m" }`,
    'resolver_preload {',
    ...Object.entries(auth.preload).map(([key, jwt]) => `  ${key}: ${q(jwt)}`),
    '}',
  ];
}
