/** The audit log: one entry per change, who did what to which target. */
import { Type, type Static } from 'typebox';
import { Page } from './common.js';

export const AuditEntry = Type.Object({
  id: Type.String(),
  at: Type.String(),
  actor: Type.String(),
  action: Type.String(),
  targetType: Type.String(),
  targetId: Type.String(),
  details: Type.Record(Type.String(), Type.Unknown()),
});
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditList = Page(AuditEntry);
export type AuditList = Static<typeof AuditList>;
