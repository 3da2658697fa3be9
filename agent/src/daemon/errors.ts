/**
 * Errors of the node daemon. Each carries a stable code and keeps the underlying failure as
 * `cause`; pull failures end up, by message, in the NodeImage status a user reads.
 */
export const DaemonErrorCodes = {
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

export type DaemonErrorCode = keyof typeof DaemonErrorCodes;

export class DaemonError extends Error {
  override readonly name: string = 'DaemonError';
  readonly code: DaemonErrorCode;

  constructor(code: DaemonErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/** A failed CRI call: `grpcCode` is the gRPC status (5 NotFound, 4 DeadlineExceeded, ...). */
export class CriError extends DaemonError {
  override readonly name = 'CriError';
  readonly grpcCode: number | undefined;

  constructor(code: DaemonErrorCode, message: string, grpcCode?: number, options?: ErrorOptions) {
    super(code, message, options);
    this.grpcCode = grpcCode;
  }
}

/** True when `err` is a DaemonError with the given code. */
export function hasDaemonCode(err: unknown, code: DaemonErrorCode): boolean {
  return err instanceof DaemonError && err.code === code;
}
