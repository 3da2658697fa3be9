/** /api/v1/audit — the audit log, newest first (admin). */
import { AuditList, ErrorResponse, PageQuery } from '@flotilla/api';
import { decodeContinue, pageSize, toPage } from '../domain/pagination.js';
import { listAudit } from '../repositories/audit-repo.js';
import type { Api, RouteContext } from './context.js';

export function auditRoutes(api: Api, ctx: RouteContext): void {
  api.get(
    '/audit',
    {
      preHandler: ctx.auth('admin'),
      schema: {
        tags: ['audit'],
        querystring: PageQuery,
        response: { 200: AuditList, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse },
      },
    },
    async (request) => {
      const limit = pageSize(request.query.limit);
      const before = decodeContinue(request.query.continue, 1);
      const rows = await listAudit(ctx.db, limit + 1, before ? Number(before[0]) : undefined);
      return toPage(rows, limit, (r) => [Number(r.id)]);
    },
  );
}
