/** What route modules receive: services and repositories' handle, never globals. */
import type {
  FastifyInstance,
  FastifyBaseLogger,
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Db } from '../db/client.js';
import type { RequireRole } from '../plugins/auth.js';
import type { StreamLimiter } from '../plugins/stream-limits.js';
import type { ClusterService } from '../services/cluster-service.js';
import type { PolicyService } from '../services/policy-service.js';
import type { RegistrationGuard } from '../services/registration-guard.js';
import type { WorkloadService } from '../services/workload-service.js';
import type { RolloutNotifier } from '../services/rollouts/notifier.js';
import type { RolloutService } from '../services/rollouts/rollout-service.js';

export type Api = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface RouteContext {
  db: Db;
  auth: RequireRole;
  clusters: ClusterService;
  workloads: WorkloadService;
  rollouts: RolloutService;
  rolloutNotifier: RolloutNotifier;
  policies: PolicyService;
  /** Registration limits; the accept route expires stale pending clusters first. */
  registrations: Pick<RegistrationGuard, 'expireStale'>;
  /** The namespaces the workload policy keeps workloads out of. */
  systemNamespaces: string[];
  /** Open server-sent event streams, per token and in total. */
  streams: StreamLimiter;
  now: () => Date;
  heartbeatTimeoutMs: number;
}
