/**
 * The hub's root pino logger. Secrets are redacted wherever they could appear (request headers,
 * credential and token fields), and pino-pretty is never used: logs are JSON for machines.
 */
import { pino, type Logger, type DestinationStream } from 'pino';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  '*.password',
  '*.token',
  '*.registrationSecret',
  '*.passwordHash',
  'nats.password',
  'password',
  'token',
  'registrationSecret',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { component: 'hub' } };
  return destination ? pino(options, destination) : pino(options);
}
