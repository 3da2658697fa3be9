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
  // Operator mode (docs/adr/0012): signing seeds and the hub's creds are never logged; user JWTs
  // are no secret without the agent's seed, but are kept out of logs all the same.
  '*.seed',
  '*.jwt',
  '*.hubCreds',
  '*.systemCreds',
  '*.operatorSigner',
  '*.userSigner',
  'seed',
  'jwt',
];

/**
 * A URL with every query value replaced: a secret passed as `?token=` (refused by the API, but
 * clients try) must not reach the logs, and query values are not needed to follow a request.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .filter((p) => p !== '')
    .map((p) => {
      const eq = p.indexOf('=');
      return eq < 0 ? p : `${p.slice(0, eq)}=[redacted]`;
    });
  return `${url.slice(0, q)}?${params.join('&')}`;
}

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** What a request log line shows: method, redacted URL, host and client address; never headers. */
function requestSerializer(req: LoggedRequest): Record<string, unknown> {
  return {
    method: req.method,
    url: typeof req.url === 'string' ? redactUrl(req.url) : undefined,
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { component: 'hub' },
    serializers: { req: requestSerializer },
  };
  return destination ? pino(options, destination) : pino(options);
}
