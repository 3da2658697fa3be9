/**
 * The services the REST API calls, composed from their dependencies: one place that knows which
 * service needs what. app.ts hands them to the routes; server.ts builds the long-running parts
 * (scheduler, ingestion, watch) itself.
 */
import type { RestLimits } from '../config.js';
import type { Db } from '../db/client.js';
import type { SpecValidator } from '../domain/spec-validator.js';
import type { HubMetrics } from '../metrics.js';
import type { AgentConsumers } from '../nats/agent-consumers.js';
import type { NatsAccountIssuer } from '../nats/auth/issuer.js';
import { createAuditService, type AuditService } from './audit-service.js';
import { createClusterService, type ClusterService } from './cluster-service.js';
import type { DesiredChanges } from './desired-sync.js';
import { createPolicyService, type PolicyService } from './policy-service.js';
import { createRegistrationGuard } from './registration-guard.js';
import type { RolloutNotifier } from './rollouts/notifier.js';
import { createRolloutService, type RolloutService } from './rollouts/rollout-service.js';
import { createStatusService, type StatusService } from './status-service.js';
import { createTokenService, type TokenService } from './token-service.js';
import { createWorkloadAdmission } from './workload-admission.js';
import { createWorkloadService, type WorkloadService } from './workload-service.js';

export interface Services {
  tokens: TokenService;
  clusters: ClusterService;
  workloads: WorkloadService;
  status: StatusService;
  rollouts: RolloutService;
  policies: PolicyService;
  audit: AuditService;
}

export interface ServiceDeps {
  db: Db;
  desired: DesiredChanges;
  metrics: HubMetrics;
  validate: SpecValidator;
  /** Issues agents' NATS accounts and user JWTs; undefined: credential requests get 503. */
  accounts: NatsAccountIssuer | undefined;
  agentConsumers: Pick<AgentConsumers, 'ensure' | 'remove'>;
  /** After a cluster was accepted or removed (wakes the NATS link reconciler). */
  onLinkChange: () => void;
  /** After a rollout was created or controlled. */
  onRolloutChange: (rolloutId: string) => void;
  rolloutNotifier: RolloutNotifier;
  limits: RestLimits;
  systemNamespaces: string[];
  heartbeatTimeoutMs: number;
  natsPublicUrls: string[];
  credentialTtlSeconds: number;
  maxDesiredMessageBytes: number;
  now: () => Date;
}

export function createServices(deps: ServiceDeps): Services {
  const { db, desired, metrics, now, heartbeatTimeoutMs } = deps;
  const admission = createWorkloadAdmission({ systemNamespaces: deps.systemNamespaces, metrics });
  return {
    tokens: createTokenService({ db }),
    clusters: createClusterService({
      db,
      desired,
      accounts: deps.accounts,
      consumers: deps.agentConsumers,
      onLinkChange: deps.onLinkChange,
      natsPublicUrls: deps.natsPublicUrls,
      credentialTtlSeconds: deps.credentialTtlSeconds,
      heartbeatTimeoutMs,
      registrationGuard: createRegistrationGuard({ limits: deps.limits, metrics }),
      now,
    }),
    workloads: createWorkloadService({
      db,
      desired,
      validate: deps.validate,
      metrics,
      admission,
      maxDesiredMessageBytes: deps.maxDesiredMessageBytes,
    }),
    status: createStatusService({ db, now }),
    rollouts: createRolloutService({
      db,
      now,
      admission,
      heartbeatTimeoutMs,
      onRolloutChange: (id) => {
        deps.rolloutNotifier.notify(id);
        deps.onRolloutChange(id);
      },
    }),
    policies: createPolicyService({ db, systemNamespaces: deps.systemNamespaces }),
    audit: createAuditService({ db }),
  };
}
