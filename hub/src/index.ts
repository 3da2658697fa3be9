export { buildApp, API_PREFIX, type AppDeps } from './app.js';
export { startHub, type HubOptions, type RunningHub } from './server.js';
export { loadConfig, DEFAULT_REST_LIMITS, type HubConfig, type RestLimits } from './config.js';
export { HubError, type HubErrorCode } from './errors.js';
export { createLogger } from './logger.js';
export { createHubMetrics, type HubMetrics } from './metrics.js';
export { createDb, type Db } from './db/client.js';
export { runMigrations, DEFAULT_MIGRATIONS_FOLDER } from './db/migrate.js';
export { createFileCredentialIssuer, signalReloadFromPidFile } from './nats/credentials/file-issuer.js';
export { externalCredentialIssuer, type NatsCredentialIssuer, type AgentIdentity } from './nats/credentials/issuer.js';
export { renderAuthorization, type StaticNatsUser } from './nats/credentials/render.js';
export { bcryptHash } from './nats/credentials/passwords.js';
export { ensureStreams, type StreamSettings } from './nats/streams.js';
export { publishAll, type StreamMessage } from './nats/bulk-publish.js';
export { type StreamLimits } from './config.js';
export { kruiseSpecValidator, type SpecValidator } from './domain/spec-validator.js';
export { sha256, newSecret } from './auth/tokens.js';
export {
  createRolloutScheduler,
  createRolloutNotifier,
  SCHEDULER_LOCK,
  type RolloutScheduler,
  type RolloutNotifier,
  type StepOutcome,
} from './rollouts/index.js';
export { recordHeartbeats } from './repositories/clusters-repo.js';
export { upsertStatuses } from './repositories/status-repo.js';
export { pruneSentOutbox } from './repositories/outbox-repo.js';
