/**
 * Checks every decoded request before schema validation (preValidation runs after the route's
 * onRequest authentication): bodies nested too deep and NUL characters anywhere are 400s naming
 * the field, counted by reason.
 */
import type { FastifyInstance } from 'fastify';
import { jsonLimitProblems } from '../domain/json-limits.js';
import { invalid } from '../errors.js';
import type { HubMetrics } from '../metrics.js';

export function registerRequestGuard(
  app: FastifyInstance,
  deps: { maxJsonDepth: number; metrics: Pick<HubMetrics, 'refusals'> },
): void {
  app.addHook('preValidation', (request, _reply, done) => {
    const problems = [
      ...jsonLimitProblems(request.params, '', 2),
      ...jsonLimitProblems(request.query, '', 2),
      ...jsonLimitProblems(request.body, '', deps.maxJsonDepth),
    ];
    if (problems.length === 0) return done();
    for (const reason of new Set(problems.map((p) => p.reason))) deps.metrics.refusals.inc({ reason });
    done(
      invalid(
        'the request is invalid',
        problems.map(({ path, message }) => ({ path, message })),
      ),
    );
  });
}
