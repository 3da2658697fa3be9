/**
 * Errors of the `flotilla` CLI. Each carries a stable code and the process exit code it maps to:
 * 2 for usage errors (bad flags or arguments, found before any request), 1 for everything else
 * (the hub refused the request, could not be reached, or a file could not be read).
 */
import type { FieldProblem } from '@flotilla/api';

export type CliErrorCode =
  | 'CLI_ERR_USAGE'
  | 'CLI_ERR_CONFIG'
  | 'CLI_ERR_FILE'
  | 'CLI_ERR_CONNECT'
  | 'CLI_ERR_API'
  | 'CLI_ERR_NOT_FOUND'
  | 'CLI_ERR_AMBIGUOUS'
  | 'CLI_ERR_RESPONSE';

export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;

export class CliError extends Error {
  readonly code: CliErrorCode;
  readonly exitCode: number;

  constructor(code: CliErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CliError';
    this.code = code;
    this.exitCode = code === 'CLI_ERR_USAGE' ? EXIT_USAGE : EXIT_ERROR;
  }
}

export const usageError = (message: string, options?: ErrorOptions): CliError =>
  new CliError('CLI_ERR_USAGE', message, options);

/** A file that is neither YAML nor JSON; the parser's first line says where. */
export const unparsableFile = (file: string, cause: unknown): CliError =>
  new CliError('CLI_ERR_FILE', `${file}: not valid YAML or JSON: ${(cause as Error).message.split('\n')[0]}`, {
    cause,
  });

/** The hub answered with an error body `{ error: { code, message, details? } }`. */
export class ApiError extends CliError {
  readonly status: number;
  readonly apiCode: string;
  readonly details: FieldProblem[];

  constructor(status: number, apiCode: string, apiMessage: string, details: FieldProblem[] = []) {
    super('CLI_ERR_API', formatApiMessage(status, apiCode, apiMessage, details));
    this.name = 'ApiError';
    this.status = status;
    this.apiCode = apiCode;
    this.details = details;
  }
}

/** `400 HUB_ERR_INVALID: the request is invalid` plus one `  path: message` line per field. */
export function formatApiMessage(status: number, code: string, message: string, details: FieldProblem[]): string {
  const lines = [`${status} ${code}: ${message}`];
  for (const d of details) lines.push(`  ${d.path === '' ? '(body)' : d.path}: ${d.message}`);
  if (status === 401) lines.push('  (give a token with --token, --token-file or FLOTILLA_TOKEN)');
  return lines.join('\n');
}
