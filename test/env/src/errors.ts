/** Why a harness component failed; stable so callers and CI logs can match on it. */
export type HarnessErrorCode =
  'TOOL_MISSING' | 'START_FAILED' | 'EXITED_EARLY' | 'NOT_READY' | 'PORT_TAKEN' | 'COMMAND_FAILED';

/**
 * A component of the test environment could not start or run. The message names the component
 * and carries the tail of its log, because that tail is what a developer reads first in CI.
 */
export class HarnessError extends Error {
  override readonly name = 'HarnessError';
  constructor(
    readonly code: HarnessErrorCode,
    readonly component: string,
    message: string,
    readonly logTail = '',
    options?: ErrorOptions,
  ) {
    super(
      `[${component}] ${code}: ${message}${logTail ? `\n--- last lines of ${component} log ---\n${logTail}` : ''}`,
      options,
    );
  }
}
