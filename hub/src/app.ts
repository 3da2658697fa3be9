/**
 * Builds the hub's fastify app from injected dependencies; nothing here opens a connection or
 * listens on a port (server.ts does), so tests drive the app with `inject()` against a real
 * database. Layout: error handling → OpenAPI → probes/metrics → /api/v1 routes.
 */
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Db } from './db/client.js';
import type { SpecValidator } from './domain/spec-validator.js';
import type { HubMetrics } from './metrics.js';
import { dashboardRoutes } from './dashboard/static.js';
import {
  DEFAULT_REST_LIMITS,
  DEFAULT_SYSTEM_NAMESPACES,
  defaultDesiredMaxMsgSize,
  type RestLimits,
  type WorkloadPolicyConfig,
} from './config.js';
import { createAuth } from './plugins/auth.js';
import { handleFrameworkError, registerErrorHandling } from './plugins/error-handler.js';
import { createRateLimiter } from './plugins/rate-limit.js';
import { registerRequestGuard } from './plugins/request-guard.js';
import { createStreamLimiter } from './plugins/stream-limits.js';
import { auditRoutes } from './routes/audit.js';
import { clusterRoutes } from './routes/clusters.js';
import type { RouteContext } from './routes/context.js';
import { healthRoutes } from './routes/health.js';
import { rolloutRoutes } from './routes/rollouts.js';
import { createRolloutNotifier, type RolloutNotifier } from './services/rollouts/notifier.js';
import { createRolloutService } from './services/rollouts/rollout-service.js';
import { statusRoutes } from './routes/status.js';
import { tokenRoutes } from './routes/tokens.js';
import { workloadRoutes } from './routes/workloads.js';
import type { CredentialSync } from './services/credential-sync.js';
import type { AgentConsumers } from './nats/agent-consumers.js';
import { createClusterService } from './services/cluster-service.js';
import { createPolicyService } from './services/policy-service.js';
import { createRegistrationGuard } from './services/registration-guard.js';
import { createWorkloadAdmission } from './services/workload-admission.js';
import { policyRoutes } from './routes/policies.js';
import { createWorkloadService } from './services/workload-service.js';
import { createOutbox, type Outbox } from './outbox/outbox.js';
import { createDesiredChanges } from './services/desired-sync.js';

export interface AppDeps {
  db: Db;
  logger: Logger;
  metrics: HubMetrics;
  validate: SpecValidator;
  /** Pushes agent identities to NATS after credentials change. */
  syncCredentials: CredentialSync;
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
    bcryptCost: number;
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
}

export const API_PREFIX = '/api/v1';

/** Agent durables of an app that runs without NATS. */
const withoutNats: Pick<AgentConsumers, 'ensure' | 'remove'> = {
  ensure: () => Promise.resolve({ action: 'unchanged' }),
  remove: () => Promise.resolve(false),
};

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const now = deps.now ?? ((): Date => new Date());
  const limits = deps.options.limits ?? DEFAULT_REST_LIMITS;
  const workloadPolicy = deps.options.workloadPolicy ?? { systemNamespaces: DEFAULT_SYSTEM_NAMESPACES };
  // pino's Logger is a FastifyBaseLogger; widening keeps the instance type the default one.
  const loggerInstance: FastifyBaseLogger = deps.logger;
  const app = Fastify({
    loggerInstance,
    bodyLimit: deps.options.bodyLimitBytes,
    // Router errors (bad percent-encoding, over-long path parameters) in the hub's envelope.
    frameworkErrors: handleFrameworkError,
    // Reject unknown fields instead of silently dropping them; report every problem at once.
    ajv: { customOptions: { removeAdditional: false, allErrors: true, coerceTypes: 'array', useDefaults: true } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  registerErrorHandling(app);
  registerRequestGuard(app, { maxJsonDepth: limits.maxJsonDepth, metrics: deps.metrics });
  app.addHook('onResponse', async (request, reply) => {
    deps.metrics.httpRequests.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unknown', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  await app.register(swagger, {
    openapi: {
      info: { title: 'Flotilla hub', version: '1' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });

  healthRoutes(app, { ready: deps.ready, registry: deps.metrics.registry });
  await dashboardRoutes(app);
  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true } }, () => app.swagger());

  const rolloutNotifier = deps.rolloutNotifier ?? createRolloutNotifier();
  const registrations = createRegistrationGuard({ limits, metrics: deps.metrics });
  const desired = createDesiredChanges(deps.outbox ?? createOutbox({ db: deps.db }));
  const admission = createWorkloadAdmission({
    systemNamespaces: workloadPolicy.systemNamespaces,
    metrics: deps.metrics,
  });
  const ctx: RouteContext = {
    db: deps.db,
    auth: createAuth(deps.db, createRateLimiter({ limits, metrics: deps.metrics })),
    streams: createStreamLimiter({ limits, metrics: deps.metrics }),
    now,
    heartbeatTimeoutMs: deps.options.heartbeatTimeoutMs,
    clusters: createClusterService({
      db: deps.db,
      desired,
      syncCredentials: deps.syncCredentials,
      consumers: deps.agentConsumers ?? withoutNats,
      onLinkChange: deps.onLinkChange ?? ((): void => undefined),
      natsPublicUrls: deps.options.natsPublicUrls,
      bcryptCost: deps.options.bcryptCost,
      heartbeatTimeoutMs: deps.options.heartbeatTimeoutMs,
      registrationGuard: registrations,
      now,
    }),
    registrations,
    workloads: createWorkloadService({
      desired,
      validate: deps.validate,
      metrics: deps.metrics,
      admission,
      maxDesiredMessageBytes:
        deps.options.maxDesiredMessageBytes ?? defaultDesiredMaxMsgSize(deps.options.bodyLimitBytes),
    }),
    rollouts: createRolloutService({
      db: deps.db,
      now,
      admission,
      onRolloutChange: (id) => {
        rolloutNotifier.notify(id);
        deps.onRolloutChange?.(id);
      },
    }),
    rolloutNotifier,
    policies: createPolicyService({ db: deps.db }),
    systemNamespaces: workloadPolicy.systemNamespaces,
  };
  await app.register(
    (api, _opts, done) => {
      const typed = api.withTypeProvider<TypeBoxTypeProvider>();
      tokenRoutes(typed, ctx);
      clusterRoutes(typed, ctx);
      workloadRoutes(typed, ctx);
      rolloutRoutes(typed, ctx);
      statusRoutes(typed, ctx);
      auditRoutes(typed, ctx);
      policyRoutes(typed, ctx);
      done();
    },
    { prefix: API_PREFIX },
  );
  return app;
}
