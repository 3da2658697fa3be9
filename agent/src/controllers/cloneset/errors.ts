/**
 * Errors of the CloneSet controller. Each carries a stable code so callers and logs can tell them
 * apart without parsing messages, and keeps the underlying failure (usually a KubeApiError) as
 * `cause`. Messages name the pod or object involved, since they end up in FailedScale /
 * FailedUpdate conditions and events a user reads.
 */
export const CloneSetErrorCodes = {
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

export type CloneSetErrorCode = keyof typeof CloneSetErrorCodes;

export class CloneSetError extends Error {
  override readonly name = 'CloneSetError';
  readonly code: CloneSetErrorCode;

  constructor(code: CloneSetErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/** The message of any thrown value, for conditions and events. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `err` as an Error, wrapping anything else that was thrown. */
export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
