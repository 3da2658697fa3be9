/** What route modules receive: the services they call, never the database or globals. */
import type {
  FastifyInstance,
  onRequestAsyncHookHandler,
  FastifyBaseLogger,
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { RequireRole } from '../plugins/auth.js';
import type { StreamLimiter } from '../plugins/stream-limits.js';
import type { AuditService } from '../services/audit-service.js';
import type { ClusterService } from '../services/cluster-service.js';
import type { PolicyService } from '../services/policy-service.js';
import type { RolloutNotifier } from '../services/rollouts/notifier.js';
import type { RolloutService } from '../services/rollouts/rollout-service.js';
import type { StatusService } from '../services/status-service.js';
import type { TokenService } from '../services/token-service.js';
import type { WorkloadService } from '../services/workload-service.js';

export type Api = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface RouteContext {
  auth: RequireRole;
  /** Rate limit of requests signed by an agent's key (the service checks the signature). */
  signed: onRequestAsyncHookHandler;
  tokens: TokenService;
  clusters: ClusterService;
  workloads: WorkloadService;
  status: StatusService;
  rollouts: RolloutService;
  /** Wakes rollout event streams when a rollout changed in this process. */
  rolloutNotifier: RolloutNotifier;
  policies: PolicyService;
  audit: AuditService;
  /** Open server-sent event streams, per token and in total. */
  streams: StreamLimiter;
}
