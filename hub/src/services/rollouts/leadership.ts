/**
 * Leadership among hub replicas through a session advisory lock held on a dedicated connection:
 * whoever holds it leads, standbys try again on their next tick. The lock lives as long as the
 * connection; when that is lost (Postgres restarted), Postgres has released the lock, so the
 * client is dropped (the pool discards it) and the instance contends again like any standby.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { tryLockSession, unlockSession, type LockKey } from '../../db/locks.js';

export interface Leadership {
  /** Leads already, or takes the lock now if it is free; false: another replica leads. */
  lead(): Promise<boolean>;
  /** Releases the lock (if held) and returns the connection. */
  resign(): Promise<void>;
  isLeader(): boolean;
  /** When this instance took the lead (undefined while it does not lead). */
  since(): Date | undefined;
}

export function createLeadership(deps: {
  pool: pg.Pool;
  key: LockKey;
  logger: Logger;
  now: () => Date;
  /** Logged once the lock is taken. */
  what: string;
}): Leadership {
  let leader: pg.PoolClient | undefined;
  let leaderSince: Date | undefined;

  const lost = (client: pg.PoolClient, err: Error): void => {
    deps.logger.warn({ err: err.message }, `${deps.what} leadership connection lost; contending again`);
    if (leader !== client) return;
    leader = undefined;
    leaderSince = undefined;
    client.release(err);
  };

  return {
    async lead() {
      if (leader) return true;
      const client = await deps.pool.connect();
      try {
        if (!(await tryLockSession(client, deps.key))) {
          client.release();
          return false;
        }
      } catch (err) {
        client.release(err as Error);
        throw err;
      }
      client.on('error', (err) => lost(client, err));
      leader = client;
      leaderSince = deps.now();
      deps.logger.info(`${deps.what} is the active instance`);
      return true;
    },
    async resign() {
      const client = leader;
      leader = undefined;
      leaderSince = undefined;
      if (!client) return;
      try {
        await unlockSession(client, deps.key);
        client.release();
      } catch (err) {
        client.release(err as Error);
      }
    },
    isLeader: () => leader !== undefined,
    since: () => leaderSince,
  };
}
