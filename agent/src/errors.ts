/**
 * Every error the agent raises is an AgentError: a stable code, so logs and callers can tell
 * failures apart without parsing messages, a message that names the object involved (CloneSet and
 * daemon messages end up in conditions, events and NodeImage status a user reads), and the
 * underlying failure as `cause`. Subclasses only add what the failing side answered (the HTTP
 * status of the apiserver, the gRPC status of the container runtime, the hub's error code).
 */

/** The runtime, configuration and the hub link. */
const RuntimeErrorCodes = {
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
  AGENT_ERR_HUB_JOIN_ABORTED: 'joining the fleet was aborted',
} as const;

/** The admission webhook and its certificates. */
const WebhookErrorCodes = {
  WEBHOOK_ERR_BAD_REVIEW: 'the request body is not an AdmissionReview v1',
  WEBHOOK_ERR_BODY_TOO_LARGE: 'the request body exceeds the size limit',
  WEBHOOK_ERR_HANDLER: 'an admission handler failed',
  WEBHOOK_ERR_LISTEN: 'the webhook server cannot listen',
  WEBHOOK_ERR_NO_CERT: 'no serving certificate is loaded yet',
  WEBHOOK_ERR_CERT_ISSUE: 'issuing a certificate failed',
  WEBHOOK_ERR_CERT_STORE: 'reading or writing the certificate Secret failed',
  WEBHOOK_ERR_CERT_PARSE: 'a stored certificate or key cannot be read',
  WEBHOOK_ERR_CONFIGURATION: 'applying a webhook configuration failed',
  WEBHOOK_ERR_THREAD: 'the admission thread is not running or did not answer',
} as const;

/** The CloneSet controller; messages end up in FailedScale / FailedUpdate conditions and events. */
const CloneSetErrorCodes = {
  CLONESET_ERR_INVALID_SPEC: 'the CloneSet is invalid (it slipped past validation)',
  CLONESET_ERR_CREATE: 'creating a pod or PVC failed',
  CLONESET_ERR_DELETE: 'deleting a pod or PVC failed',
  CLONESET_ERR_POD_UPDATE: 'updating a pod failed',
  CLONESET_ERR_INPLACE_ONLY: 'update strategy is InPlaceOnly but the pod can not be updated in place',
  CLONESET_ERR_LIFECYCLE_STATE: 'the pod is in a lifecycle state that does not allow the update',
  CLONESET_ERR_REVISION: 'reading or writing a ControllerRevision failed',
  CLONESET_ERR_STATUS: 'writing the CloneSet status failed',
  CLONESET_ERR_INPLACE_STATE: 'an in-place update annotation could not be read',
} as const;

/** The SidecarSet controller and injection. */
const SidecarSetErrorCodes = {
  SIDECARSET_ERR_INJECTION_REVISION: 'the injection revision a SidecarSet names does not exist',
  SIDECARSET_ERR_RESOURCES_POLICY: "a sidecar's resourcesPolicy cannot be computed for the pod",
} as const;

/** The node daemon; pull failures end up, by message, in the NodeImage status a user reads. */
const DaemonErrorCodes = {
  DAEMON_ERR_CONFIG: 'invalid daemon configuration',
  DAEMON_ERR_CRI_UNAVAILABLE: 'no container runtime socket found',
  DAEMON_ERR_CRI_PROTO: 'the CRI api.proto could not be loaded',
  DAEMON_ERR_CRI_CALL: 'a CRI ImageService call failed',
  DAEMON_ERR_CRI_TIMEOUT: 'a CRI ImageService call timed out',
  DAEMON_ERR_CRI_ABORTED: 'a CRI ImageService call was cancelled',
  DAEMON_ERR_IMAGE_REF: 'the image reference is invalid',
  DAEMON_ERR_DEADLINE: 'pulling exceeds the activeDeadlineSeconds',
  DAEMON_ERR_SECRET: 'a pull secret could not be read',
} as const;

/** Every code, with what it means. */
export const AgentErrorCodes = {
  ...RuntimeErrorCodes,
  ...WebhookErrorCodes,
  ...CloneSetErrorCodes,
  ...SidecarSetErrorCodes,
  ...DaemonErrorCodes,
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

/** A failed CRI call: `grpcCode` is the gRPC status (5 NotFound, 4 DeadlineExceeded, ...). */
export class CriError extends AgentError {
  override readonly name = 'CriError';
  readonly grpcCode: number | undefined;

  constructor(code: AgentErrorCode, message: string, grpcCode?: number, options?: ErrorOptions) {
    super(code, message, options);
    this.grpcCode = grpcCode;
  }
}

/**
 * Joining the fleet failed (AGENT_ERR_HUB_JOIN) or was aborted (AGENT_ERR_HUB_JOIN_ABORTED);
 * `hubCode` is the error code the hub answered with, if any (e.g. HUB_ERR_REGISTRATION_REFUSED).
 */
export class RegistrationError extends AgentError {
  override readonly name = 'RegistrationError';
  readonly hubCode: string | undefined;

  constructor(
    code: 'AGENT_ERR_HUB_JOIN' | 'AGENT_ERR_HUB_JOIN_ABORTED',
    message: string,
    hubCode?: string,
    options?: ErrorOptions,
  ) {
    super(code, message, options);
    this.hubCode = hubCode;
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

/** The message of any thrown value, for conditions, events and logs. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `err` as an Error, wrapping anything else that was thrown. */
export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
