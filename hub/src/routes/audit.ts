/** /api/v1/audit — the audit log, newest first (admin). */
import { AuditList, PageQuery } from '@flotilla/api';
import { decodeContinue, pageSize, toPage } from '../domain/pagination.js';
import { listAudit } from '../repositories/audit-repo.js';
import type { Api, RouteContext } from './context.js';
import { errorResponses } from './responses.js';

export function auditRoutes(api: Api, ctx: RouteContext): void {
  api.get(
    '/audit',
    {
      onRequest: ctx.auth('admin'),
      schema: {
        tags: ['audit'],
        querystring: PageQuery,
        response: { 200: AuditList, ...errorResponses },
      },
    },
    async (request) => {
      const limit = pageSize(request.query.limit);
      const before = decodeContinue(request.query.continue, ['id']);
      const rows = await listAudit(ctx.db, limit + 1, before?.[0]);
      return toPage(rows, limit, (r) => [Number(r.id)]);
    },
  );
}
