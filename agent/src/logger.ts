import { pino, type DestinationStream, type Logger } from 'pino';

/** pino's levels, as `--log-level` takes them. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Paths whose values never reach the logs: tokens, passwords, credentials and auth headers, at
 * the top level and one level down (pino's redaction matches exact paths, `*` is one level).
 */
export const REDACT_PATHS = [
  'token',
  'password',
  'authorization',
  'credentials',
  'bearerToken',
  'keyData',
  'certData',
  'headers.authorization',
  'headers.Authorization',
  '*.token',
  '*.password',
  '*.pass',
  '*.authorization',
  '*.credentials',
  '*.bearerToken',
  '*.keyData',
  '*.certData',
  '*.headers.authorization',
  '*.headers.Authorization',
  // The cluster's NATS user key (docs/adr/0012) and the JWT the hub signed for it.
  'seed',
  'jwt',
  '*.seed',
  '*.jwt',
];

/** The one root logger: JSON lines, secrets redacted. Components bind children of it. */
export function createRootLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { component: 'agent' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
