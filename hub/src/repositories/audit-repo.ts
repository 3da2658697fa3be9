/** The audit log: written in the same transaction as the change it records. */
import { desc, lt } from 'drizzle-orm';
import type { AuditEntry } from '@flotilla/api';
import type { DbOrTx } from '../db/client.js';
import { auditLog } from '../db/schema/index.js';

export interface AuditRecord {
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
  details?: Record<string, unknown>;
}

export async function recordAudit(db: DbOrTx, r: AuditRecord): Promise<void> {
  await db.insert(auditLog).values({ ...r, details: r.details ?? {} });
}

/** Newest first; `beforeId` continues a page. */
export async function listAudit(db: DbOrTx, limit: number, beforeId: number | undefined): Promise<AuditEntry[]> {
  const rows = await db
    .select()
    .from(auditLog)
    .where(beforeId === undefined ? undefined : lt(auditLog.id, beforeId))
    .orderBy(desc(auditLog.id))
    .limit(limit);
  return rows.map((r) => ({
    id: String(r.id),
    at: r.at.toISOString(),
    actor: r.actor,
    action: r.action,
    targetType: r.targetType,
    targetId: r.targetId,
    details: r.details,
  }));
}
