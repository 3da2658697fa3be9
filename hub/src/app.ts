/**
 * Builds the hub's fastify app from injected dependencies; nothing here opens a connection or
 * listens on a port (server.ts does), so tests drive the app with `inject()` against a real
 * database. Layout: error handling and request guards → OpenAPI, probes, metrics, dashboard →
 * /api/v1 routes over the services (services/index.ts).
 */
import swagger from '@fastify/swagger';
import { SIGNATURE_HEADER } from '@flotilla/api';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import {
  DEFAULT_REST_LIMITS,
  DEFAULT_SYSTEM_NAMESPACES,
  defaultDesiredMaxMsgSize,
  type RestLimits,
  type WorkloadPolicyConfig,
} from './config.js';
import { dashboardRoutes } from './dashboard/static.js';
import type { Db } from './db/client.js';
import type { SpecValidator } from './domain/spec-validator.js';
import type { HubMetrics } from './metrics.js';
import type { AgentConsumers } from './nats/agent-consumers.js';
import { createOutbox, type Outbox } from './outbox/outbox.js';
import { createAuth, limitSigned } from './plugins/auth.js';
import { handleFrameworkError, registerErrorHandling } from './plugins/error-handler.js';
import { createRateLimiter } from './plugins/rate-limit.js';
import { registerRequestGuard } from './plugins/request-guard.js';
import { createStreamLimiter } from './plugins/stream-limits.js';
import { auditRoutes } from './routes/audit.js';
import { clusterJoinRoutes, clusterRoutes } from './routes/clusters.js';
import type { Api, RouteContext } from './routes/context.js';
import { healthRoutes } from './routes/health.js';
import { policyRoutes } from './routes/policies.js';
import { rolloutEventRoutes } from './routes/rollout-events.js';
import { rolloutRoutes } from './routes/rollouts.js';
import { statusRoutes } from './routes/status.js';
import { tokenRoutes } from './routes/tokens.js';
import { revisionRoutes, workloadRoutes } from './routes/workloads.js';
import type { NatsAccountIssuer } from './nats/auth/issuer.js';
import { createDesiredChanges } from './services/desired-sync.js';
import { createServices } from './services/index.js';
import { createRolloutNotifier, type RolloutNotifier } from './services/rollouts/notifier.js';

export interface AppDeps {
  db: Db;
  logger: Logger;
  metrics: HubMetrics;
  validate: SpecValidator;
  /** Issues agents' NATS accounts and user JWTs; absent: credential requests get 503. */
  accounts?: NatsAccountIssuer;
  /** The agents' durables; absent: an app without NATS (REST tests), nothing to create. */
  agentConsumers?: Pick<AgentConsumers, 'ensure' | 'remove'>;
  /** Called after a cluster was accepted or removed (wakes the NATS link reconciler). */
  onLinkChange?: () => void;
  /**
   * Where desired-state changes queue their messages; absent: an outbox without a relay (an app
   * without NATS: rows stay in the table).
   */
  outbox?: Outbox;
  ready: () => Promise<boolean>;
  /** Wakes rollout event streams; shared with the rollout scheduler. */
  rolloutNotifier?: RolloutNotifier;
  /** Called after a rollout was created or controlled (wakes the scheduler). */
  onRolloutChange?: (rolloutId: string) => void;
  options: {
    bodyLimitBytes: number;
    heartbeatTimeoutMs: number;
    natsPublicUrls: string[];
    /** Lifetime of an agent's user JWT (default 24 h). */
    credentialTtlSeconds?: number;
    /** Default DEFAULT_REST_LIMITS. */
    limits?: RestLimits;
    /** Default: DEFAULT_SYSTEM_NAMESPACES. */
    workloadPolicy?: WorkloadPolicyConfig;
    /**
     * The largest desired message that can be published: the DESIRED stream's max_msg_size or
     * nats-server's max_payload, whichever is lower. Default: the stream's default for the body limit.
     */
    maxDesiredMessageBytes?: number;
  };
  now?: () => Date;
  /** Serve HTTPS with this certificate and key (PEM); plain HTTP when absent. */
  https?: { cert: string; key: string };
}

export const API_PREFIX = '/api/v1';

/** Agent durables of an app that runs without NATS. */
const withoutNats: Pick<AgentConsumers, 'ensure' | 'remove'> = {
  ensure: () => Promise.resolve({ action: 'unchanged' }),
  remove: () => Promise.resolve(false),
};

/** The fastify instance: body limit, router errors in the hub's envelope, strict validation. */
function createFastify(deps: AppDeps): Api {
  // pino's Logger is a FastifyBaseLogger; widening keeps the instance type the default one.
  const loggerInstance: FastifyBaseLogger = deps.logger;
  // With `https` fastify serves TLS; the handlers and this instance's type stay the same (the
  // typings would otherwise make every route generic over the server type).
  const https = deps.https ? ({ https: deps.https } as object) : {};
  return Fastify({
    ...https,
    loggerInstance,
    bodyLimit: deps.options.bodyLimitBytes,
    // Router errors (bad percent-encoding, over-long path parameters) in the hub's envelope.
    frameworkErrors: handleFrameworkError,
    // Reject unknown fields instead of silently dropping them; report every problem at once.
    ajv: { customOptions: { removeAdditional: false, allErrors: true, coerceTypes: 'array', useDefaults: true } },
  }).withTypeProvider<TypeBoxTypeProvider>();
}

/** Error envelope, request guards and the request histogram, before any route. */
function registerHooks(app: Api, deps: AppDeps, limits: RestLimits): void {
  registerErrorHandling(app);
  registerRequestGuard(app, { maxJsonDepth: limits.maxJsonDepth, metrics: deps.metrics });
  app.addHook('onResponse', async (request, reply) => {
    deps.metrics.httpRequests.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unknown', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
}

/** OpenAPI, probes, metrics and the dashboard: everything outside the authenticated API. */
async function registerPublic(app: Api, deps: AppDeps): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: { title: 'Flotilla hub', version: '1' },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          // Renew and re-key: the agent's signature over the request is its credential.
          agentSignature: { type: 'apiKey', in: 'header', name: SIGNATURE_HEADER },
        },
      },
      security: [{ bearer: [] }],
    },
  });
  healthRoutes(app, { ready: deps.ready, registry: deps.metrics.registry });
  await dashboardRoutes(app);
  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true } }, () => app.swagger());
}

/** The services and the request limits the routes use. */
function routeContext(deps: AppDeps, limits: RestLimits): RouteContext {
  const { metrics } = deps;
  const rolloutNotifier = deps.rolloutNotifier ?? createRolloutNotifier();
  const limiter = createRateLimiter({ limits, metrics });
  const services = createServices({
    db: deps.db,
    desired: createDesiredChanges(deps.outbox ?? createOutbox({ db: deps.db })),
    metrics,
    validate: deps.validate,
    accounts: deps.accounts,
    agentConsumers: deps.agentConsumers ?? withoutNats,
    onLinkChange: deps.onLinkChange ?? ((): void => undefined),
    onRolloutChange: deps.onRolloutChange ?? ((): void => undefined),
    rolloutNotifier,
    limits,
    systemNamespaces: (deps.options.workloadPolicy ?? { systemNamespaces: DEFAULT_SYSTEM_NAMESPACES }).systemNamespaces,
    heartbeatTimeoutMs: deps.options.heartbeatTimeoutMs,
    natsPublicUrls: deps.options.natsPublicUrls,
    credentialTtlSeconds: deps.options.credentialTtlSeconds ?? 86_400,
    maxDesiredMessageBytes:
      deps.options.maxDesiredMessageBytes ?? defaultDesiredMaxMsgSize(deps.options.bodyLimitBytes),
    now: deps.now ?? ((): Date => new Date()),
  });
  return {
    ...services,
    auth: createAuth(services.tokens, limiter),
    signed: limitSigned(limiter),
    streams: createStreamLimiter({ limits, metrics }),
    rolloutNotifier,
  };
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const limits = deps.options.limits ?? DEFAULT_REST_LIMITS;
  const app = createFastify(deps);
  registerHooks(app, deps, limits);
  await registerPublic(app, deps);
  const ctx = routeContext(deps, limits);
  await app.register(
    (api, _opts, done) => {
      const typed = api.withTypeProvider<TypeBoxTypeProvider>();
      for (const routes of [
        tokenRoutes,
        clusterJoinRoutes,
        clusterRoutes,
        workloadRoutes,
        revisionRoutes,
        rolloutRoutes,
        rolloutEventRoutes,
        statusRoutes,
        auditRoutes,
        policyRoutes,
      ]) {
        routes(typed, ctx);
      }
      done();
    },
    { prefix: API_PREFIX },
  );
  return app;
}
