/**
 * Limits on cluster registration. A bootstrap token is a shared secret handed to every agent, so
 * whoever holds it could register names in bulk (and pre-register future cluster names with
 * labels of their choosing). Inside each registration's transaction, serialized by an advisory
 * lock, this guard first removes pending clusters older than the TTL (their agents register
 * again), then refuses with 429 when the token has registered too many clusters in the last
 * minute, holds too many pending ones, or the hub holds too many pending clusters overall.
 */
import type { Principal } from '../auth/tokens.js';
import type { RestLimits } from '../config.js';
import type { DbOrTx, Tx } from '../db/client.js';
import { lockRegistrations } from '../db/locks.js';
import { tooManyRequests } from '../errors.js';
import type { HubMetrics } from '../metrics.js';
import { recordAudit } from '../repositories/audit-repo.js';
import {
  countPendingClusters,
  countRecentRegistrations,
  expirePendingClusters,
} from '../repositories/clusters-repo.js';

/** Retry-After of a refused registration: pending clusters leave as operators accept them. */
const RETRY_SECONDS = 60;

export type RegistrationLimits = Pick<
  RestLimits,
  'registrationsPerMinute' | 'pendingClustersPerToken' | 'pendingClustersTotal' | 'pendingClusterTtlSeconds'
>;

export interface RegistrationGuard {
  /** Call first in a registration's transaction; throws 429 when a limit is reached. */
  admit(tx: Tx, actor: Principal): Promise<void>;
  /** Removes pending clusters older than the TTL (audited); returns their names. */
  expireStale(db: DbOrTx): Promise<string[]>;
}

export function createRegistrationGuard(deps: {
  limits: RegistrationLimits;
  metrics?: Pick<HubMetrics, 'refusals'>;
}): RegistrationGuard {
  const { limits } = deps;
  const refuse = (reason: string, message: string): never => {
    deps.metrics?.refusals.inc({ reason });
    throw tooManyRequests(message, RETRY_SECONDS);
  };

  async function expireStale(db: DbOrTx): Promise<string[]> {
    const expired = await expirePendingClusters(db, limits.pendingClusterTtlSeconds);
    for (const name of expired) {
      await recordAudit(db, {
        actor: 'hub',
        action: 'cluster.registration.expire',
        targetType: 'cluster',
        targetId: name,
        details: { ttlSeconds: limits.pendingClusterTtlSeconds },
      });
    }
    return expired;
  }

  return {
    expireStale,
    async admit(tx, actor) {
      await lockRegistrations(tx);
      await expireStale(tx);
      const recent = await countRecentRegistrations(tx, actor.name);
      if (recent >= limits.registrationsPerMinute) {
        refuse('registrations_per_minute', `this token registered ${recent} clusters in the last minute (the limit)`);
      }
      const pending = await countPendingClusters(tx, actor.name);
      if (pending >= limits.pendingClustersPerToken) {
        refuse('pending_per_token', `this token has ${pending} clusters waiting for acceptance (the limit)`);
      }
      const pendingAll = await countPendingClusters(tx);
      if (pendingAll >= limits.pendingClustersTotal) {
        refuse('pending_total', 'the hub holds as many clusters waiting for acceptance as it allows');
      }
    },
  };
}
