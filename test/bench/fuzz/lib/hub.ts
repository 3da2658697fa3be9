/**
 * The hub under fuzz: the real hub (`startHub`, not listening, driven with `app.inject`) on a
 * fresh Postgres database and its own NATS cluster in operator mode, as the hub suites run it.
 * Request limits are raised so the fuzz reaches the routes rather than the rate limiter, and the
 * hub's error log lines are captured so a 5xx comes with its stack.
 */
import { Writable } from 'node:stream';
import { createLogger, loadConfig, startHub, type RunningHub } from '@flotilla/hub';
import { Registry } from 'prom-client';
import { insertToken, migratedDatabase, type HubDb } from '../../../integration/hub/fixtures.js';
import { startFleetNats, type FleetNats } from '../../../integration/hub/fleet.js';

/** Limits high enough that a fuzz run at full speed is never throttled. */
const FUZZ_LIMITS: Record<string, string> = {
  FLOTILLA_RATE_LIMIT_PER_SECOND: '100000',
  FLOTILLA_RATE_LIMIT_BURST: '1000000',
  FLOTILLA_RATE_LIMIT_ANONYMOUS_PER_SECOND: '100000',
  FLOTILLA_RATE_LIMIT_ANONYMOUS_BURST: '1000000',
  FLOTILLA_REGISTRATIONS_PER_MINUTE: '100000',
  FLOTILLA_PENDING_CLUSTERS_PER_TOKEN: '1000000',
  FLOTILLA_PENDING_CLUSTERS_TOTAL: '1000000',
};

export type Role = 'admin' | 'operator' | 'viewer' | 'bootstrap';

export interface LogLine {
  level: number;
  msg?: string;
  err?: { type?: string; message?: string; stack?: string };
  [key: string]: unknown;
}

export interface FuzzHub {
  hub: RunningHub;
  nats: FleetNats;
  registry: Registry;
  tokens: Record<Role | 'revoked', string>;
  /** Secrets that must never appear in an answer (API tokens, the hub's NATS signing seeds). */
  secrets: string[];
  /** Error (and fatal) log lines since the last call. */
  takeErrors(): LogLine[];
  stop(): Promise<void>;
}

/** Keeps the hub's log lines at error level and above. */
function errorCapture(): { stream: Writable; take(): LogLine[] } {
  let lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const text of chunk.toString('utf8').split('\n')) {
        if (text === '') continue;
        try {
          const line = JSON.parse(text) as LogLine;
          if (line.level >= 50) lines.push(line);
        } catch {
          lines.push({ level: 60, msg: text });
        }
      }
      done();
    },
  });
  return {
    stream,
    take() {
      const out = lines;
      lines = [];
      return out;
    },
  };
}

export async function startFuzzHub(): Promise<FuzzHub> {
  const nats: FleetNats = await startFleetNats();
  let db: HubDb | undefined;
  try {
    db = await migratedDatabase('flotilla_fuzz');
    const config = loadConfig({
      DATABASE_URL: db.database.url,
      ...nats.hubEnv,
      FLOTILLA_RELAY_INTERVAL_MS: '100',
      LOG_LEVEL: 'warn',
      ...FUZZ_LIMITS,
    });
    const capture = errorCapture();
    const registry = new Registry();
    const hub = await startHub({
      config,
      logger: createLogger('warn', capture.stream),
      registry,
      listen: false,
    });
    const roles = ['admin', 'operator', 'viewer', 'bootstrap', 'revoked'] as const;
    const secrets = await Promise.all(
      roles.map((r) => insertToken(db!.pool, `fuzz-${r}`, r === 'revoked' ? 'admin' : r)),
    );
    await db.pool.query(`update api_tokens set revoked_at = now() where name = 'fuzz-revoked'`);
    const tokens = Object.fromEntries(roles.map((r, i) => [r, secrets[i]!])) as Record<Role | 'revoked', string>;
    const hubDb = db;
    return {
      hub,
      nats,
      registry,
      tokens,
      secrets: [...secrets, nats.setup.operatorSigningSeed, nats.setup.accountSigningSeed],
      takeErrors: () => capture.take(),
      async stop() {
        await hub.close();
        await hubDb.close();
        await nats.stop();
      },
    };
  } catch (err) {
    await db?.close();
    await nats.stop();
    throw err;
  }
}
