/**
 * Every error the agent raises carries a stable code, so logs and callers can tell failures apart
 * without parsing messages, and keeps the underlying failure as `cause`.
 */
export const AgentErrorCodes = {
  AGENT_ERR_CONFIG: 'invalid configuration',
  AGENT_ERR_KUBE_API: 'a Kubernetes API request failed',
  AGENT_ERR_LIST: 'listing a resource failed',
  AGENT_ERR_WATCH: 'a watch failed',
  AGENT_ERR_WATCH_EXPIRED: 'the watch resourceVersion is too old (410 Gone)',
  AGENT_ERR_CACHE_SYNC: 'informer caches did not sync',
  AGENT_ERR_INDEXER: 'invalid informer indexer',
  AGENT_ERR_SELECTOR: 'invalid label selector',
  AGENT_ERR_LEASE: 'a leader election lease operation failed',
  AGENT_ERR_LEADERSHIP_LOST: 'leadership was lost',
  AGENT_ERR_SHUTDOWN: 'shutdown did not finish cleanly',
  AGENT_ERR_MANAGER: 'invalid manager state',
  AGENT_ERR_HEALTH_SERVER: 'the health server failed',
  AGENT_ERR_JOIN_SECRET: 'the join Secret could not be read or written',
  AGENT_ERR_HUB_JOIN: 'joining the fleet failed',
} as const;

export type AgentErrorCode = keyof typeof AgentErrorCodes;

/** Base class of every error the agent raises. */
export class AgentError extends Error {
  override readonly name: string = 'AgentError';
  readonly code: AgentErrorCode;

  constructor(code: AgentErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/** A non-2xx answer of the Kubernetes API; `status` is the HTTP status, `reason` the Status reason. */
export class KubeApiError extends AgentError {
  override readonly name = 'KubeApiError';
  readonly status: number;
  readonly reason: string | undefined;
  readonly body: unknown;

  constructor(
    status: number,
    message: string,
    details: { reason?: string; body?: unknown } = {},
    options?: ErrorOptions,
  ) {
    super('AGENT_ERR_KUBE_API', message, options);
    this.status = status;
    this.reason = details.reason;
    this.body = details.body;
  }
}

/** True when `err` is a Kubernetes API error with the given HTTP status (404, 409, 410, ...). */
export function isKubeStatus(err: unknown, status: number): boolean {
  return err instanceof KubeApiError && err.status === status;
}

/** True when `err` is an {@link AgentError} with the given code. */
export function hasCode(err: unknown, code: AgentErrorCode): boolean {
  return err instanceof AgentError && err.code === code;
}
