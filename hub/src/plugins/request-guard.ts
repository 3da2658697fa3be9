/**
 * Checks every decoded request before schema validation (preValidation runs after the route's
 * onRequest authentication): bodies nested too deep, NUL characters anywhere, `__proto__` /
 * `constructor.prototype` keys and numbers that are not finite are 400s naming the field, counted
 * by reason. JSON bodies are read with JSON.parse, which keeps such keys as plain data, so they
 * reach this check (fastify's own parser refused them as "not valid JSON", naming nothing).
 */
import type { FastifyInstance } from 'fastify';
import { jsonLimitProblems, type JsonLimitProblem } from '../domain/json-limits.js';
import { invalid } from '../errors.js';
import type { HubMetrics } from '../metrics.js';

function parseJson(_request: unknown, body: string, done: (err: Error | null, value?: unknown) => void): void {
  if (body === '') {
    done(invalid('the request body is empty', [{ path: '', message: 'must be a JSON document' }]));
    return;
  }
  try {
    done(null, JSON.parse(body));
  } catch (err) {
    done(invalid('the request body is not valid JSON', [{ path: '', message: (err as Error).message }]));
  }
}

export function registerRequestGuard(
  app: FastifyInstance,
  deps: { maxJsonDepth: number; metrics: Pick<HubMetrics, 'refusals'> },
): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJson);
  const refusal = (problems: JsonLimitProblem[]): Error | undefined => {
    if (problems.length === 0) return undefined;
    for (const reason of new Set(problems.map((p) => p.reason))) deps.metrics.refusals.inc({ reason });
    return invalid(
      'the request is invalid',
      problems.map(({ path, message }) => ({ path, message })),
    );
  };
  app.addHook('preValidation', (request, _reply, done) => {
    done(
      refusal([
        ...jsonLimitProblems(request.params, '', 2),
        ...jsonLimitProblems(request.query, '', 2),
        ...jsonLimitProblems(request.body, '', deps.maxJsonDepth),
      ]),
    );
  });
  // Once more after validation: ajv's coercion turns a path or query value "Infinity" or "1e999"
  // into a number that passes `type: integer` whatever its bounds.
  app.addHook('preHandler', (request, _reply, done) => {
    done(
      refusal([
        ...jsonLimitProblems(request.params, 'params', 2),
        ...jsonLimitProblems(request.query, 'querystring', 2),
      ]),
    );
  });
}
