/** Probes and metrics, outside /api/v1 and without auth (Kubernetes probes and Prometheus scrape them). */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

export interface HealthDeps {
  /** Readiness: the database and NATS answer; false turns /readyz into a 503. */
  ready: () => Promise<boolean>;
  registry: Registry;
}

export function healthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  app.get('/healthz', { schema: { hide: true } }, () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const ok = await deps.ready().catch(() => false);
    return reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not ready' });
  });
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    return reply.header('content-type', deps.registry.contentType).send(await deps.registry.metrics());
  });
}
