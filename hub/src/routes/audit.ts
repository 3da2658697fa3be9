/** /api/v1/audit — the audit log, newest first (admin). */
import { AuditList, PageQuery } from '@flotilla/api';
import type { Api, RouteContext } from './context.js';
import { errorResponses } from './responses.js';

export function auditRoutes(api: Api, ctx: RouteContext): void {
  api.get(
    '/audit',
    {
      onRequest: ctx.auth('admin'),
      schema: { tags: ['audit'], querystring: PageQuery, response: { 200: AuditList, ...errorResponses } },
    },
    async (request) => ctx.audit.list(request.query),
  );
}
