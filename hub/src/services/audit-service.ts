/** Reading the audit log, newest first (the routes require the admin role). */
import type { AuditList, PageQuery } from '@flotilla/api';
import type { Db } from '../db/client.js';
import { paginate } from '../domain/pagination.js';
import { listAudit } from '../repositories/audit-repo.js';

export interface AuditService {
  list(query: PageQuery): Promise<AuditList>;
}

export function createAuditService(deps: { db: Db }): AuditService {
  return {
    list: (query) =>
      paginate(
        query,
        ['id'],
        (before, limit) => listAudit(deps.db, limit + 1, before?.[0]),
        (r) => [Number(r.id)],
        (r) => r,
      ),
  };
}
