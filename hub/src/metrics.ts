/** The hub's Prometheus metrics, registered on an injected registry (tests get their own). */
import { Counter, Gauge, Histogram, collectDefaultMetrics, type Registry } from 'prom-client';

export interface HubMetrics {
  registry: Registry;
  httpRequests: Histogram<'method' | 'route' | 'status'>;
  outboxPublished: Counter;
  outboxPruned: Counter;
  /**
   * Desired-state messages refused, once per attempt, by reason: `max_payload` (above
   * nats-server's max_payload, refused by the client), `message_size` (above the stream's
   * max_msg_size), `stream_full` (a new subject while DESIRED is at max_msgs or max_bytes),
   * `other`. The rows stay in the outbox and are retried with a backoff.
   */
  outboxRefused: Counter<'reason'>;
  outboxPending: Gauge;
  relayPublishSeconds: Histogram;
  /**
   * Where a desired-state change spends its time, per stage: `plan` (reading clusters and
   * current rows, rendering manifests), `store` (desired and outbox rows), `relay_read` (the
   * relay finding unsent rows), `relay_mark` (marking them sent and committing), `handoff`
   * (commit of the write → JetStream acknowledged its last message).
   */
  desiredStageSeconds: Histogram<'stage'>;
  /** Status ingestion per batch: `classify` (decode and check), `store` (upserts), `ack`. */
  statusBatchSeconds: Histogram<'stage'>;
  statusBatchSize: Histogram;
  /** Messages received and discarded, by DropReason (classify.ts); see status-ingest.ts for what it covers. */
  messagesDropped: Counter<'reason'>;
  /** Status reports over their cluster's budget, by cluster: who floods (also in messagesDropped). */
  statusRateLimited: Counter<'cluster'>;
  statusReports: Counter;
  statusWritten: Counter;
  heartbeats: Counter;
  /** Postgres connections lost while open (a restart, a failover); each is replaced on next use. */
  dbConnectionsLost: Counter;
  /**
   * Republishes of a cluster's desired objects after its agent link restarted: `published`, or
   * `deferred` (one heartbeat of a link that restarted within the interval: it waits its turn).
   */
  linkRepublishes: Counter<'result'>;
  /**
   * Messages on the DESIRED stream that were not what the hub stored for their subject and were
   * put right, by reason: `invalid` (not a desired message), `mismatch` (another object,
   * generation or content), `unknown` (a subject the hub never placed; the message is deleted).
   */
  desiredRepairs: Counter<'reason'>;
  /**
   * Changes to agents' durables: `created`, `repaired` (reason: what drifted, e.g. `filter+push`),
   * `deleted` (reason `not_accepted`).
   */
  agentConsumerChanges: Counter<'action' | 'reason'>;
  /**
   * REST requests refused by a limit or policy, by reason: `rate_limit`, `rate_limit_anonymous`,
   * `streams_per_token`, `streams_total`, `registrations_per_minute`, `pending_per_token`,
   * `pending_total`, `workload_policy`, `json_depth`, `nul_character`, `prototype_key`,
   * `non_finite_number`, `desired_message_size`.
   */
  refusals: Counter<'reason'>;
  /**
   * Member clusters of active rollouts waiting, by reason (api's WAIT_REASONS: soak, approval,
   * window, concurrency, …), as the active scheduler saw them at its last tick; zero on a
   * standby, so the sum over replicas is right.
   */
  rolloutWaits: Gauge<'reason'>;
  /** 1 on the replica that holds the rollout scheduler's leadership, 0 on a standby. */
  schedulerLeader: Gauge;
}

/**
 * Registers every hub metric. A declarative table, one entry per metric (name, help, labels,
 * buckets), longer than a function should be but read top to bottom like the interface above;
 * splitting it by area would scatter the names operators look up.
 */
export function createHubMetrics(registry: Registry, withDefaults = true): HubMetrics {
  if (withDefaults) collectDefaultMetrics({ register: registry, prefix: 'flotilla_hub_' });
  const registers = [registry];
  return {
    registry,
    httpRequests: new Histogram({
      name: 'flotilla_hub_http_request_duration_seconds',
      help: 'REST request latency',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    outboxPublished: new Counter({
      name: 'flotilla_hub_outbox_published_total',
      help: 'Desired-state messages published from the outbox',
      registers,
    }),
    outboxPruned: new Counter({
      name: 'flotilla_hub_outbox_pruned_total',
      help: 'Sent outbox rows deleted after the retention',
      registers,
    }),
    outboxRefused: new Counter({
      name: 'flotilla_hub_outbox_refused_total',
      help: 'Desired-state messages refused by JetStream or above max_payload, per attempt, by reason (retried later)',
      labelNames: ['reason'],
      registers,
    }),
    relayPublishSeconds: new Histogram({
      name: 'flotilla_hub_outbox_publish_seconds',
      help: 'Time to publish one outbox batch and have every message acknowledged by JetStream',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    desiredStageSeconds: new Histogram({
      name: 'flotilla_hub_desired_stage_seconds',
      help: 'Time a desired-state change spends per stage (plan, store, relay_read, relay_mark, handoff)',
      labelNames: ['stage'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    statusBatchSeconds: new Histogram({
      name: 'flotilla_hub_status_batch_seconds',
      help: 'Time one status batch spends per stage (classify, store, ack)',
      labelNames: ['stage'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    statusBatchSize: new Histogram({
      name: 'flotilla_hub_status_batch_messages',
      help: 'Messages per status batch',
      buckets: [1, 10, 100, 500, 1000, 2000, 5000],
      registers,
    }),
    outboxPending: new Gauge({
      name: 'flotilla_hub_outbox_pending',
      help: 'Outbox rows not yet published (sampled)',
      registers,
    }),
    messagesDropped: new Counter({
      name: 'flotilla_hub_nats_messages_dropped_total',
      help:
        'Messages the hub received on the STATUS stream and discarded, once each, by reason (what the stream ' +
        'replaced before the hub read it is not counted)',
      labelNames: ['reason'],
      registers,
    }),
    statusRateLimited: new Counter({
      name: 'flotilla_hub_status_rate_limited_total',
      help: 'Status reports dropped because their cluster went over its budget (FLOTILLA_STATUS_REPORTS_PER_SECOND), by cluster',
      labelNames: ['cluster'],
      registers,
    }),
    statusReports: new Counter({
      name: 'flotilla_hub_status_reports_total',
      help: 'Valid status reports received',
      registers,
    }),
    statusWritten: new Counter({
      name: 'flotilla_hub_status_rows_written_total',
      help: 'Status rows written (after coalescing and the staleness guard)',
      registers,
    }),
    heartbeats: new Counter({
      name: 'flotilla_hub_heartbeats_total',
      help: 'Valid heartbeats received',
      registers,
    }),
    dbConnectionsLost: new Counter({
      name: 'flotilla_hub_db_connections_lost_total',
      help: 'Postgres connections lost while open (pool clients, the outbox listener)',
      registers,
    }),
    linkRepublishes: new Counter({
      name: 'flotilla_hub_link_republishes_total',
      help: 'Republishes of desired objects for restarted agent links (published, or deferred by the rate limit)',
      labelNames: ['result'],
      registers,
    }),
    desiredRepairs: new Counter({
      name: 'flotilla_hub_desired_repairs_total',
      help: 'Desired-state messages that did not match what the hub stored and were republished or deleted',
      labelNames: ['reason'],
      registers,
    }),
    agentConsumerChanges: new Counter({
      name: 'flotilla_hub_agent_consumer_changes_total',
      help: "Agents' durable consumers created, repaired (deleted and created again) or deleted by the hub",
      labelNames: ['action', 'reason'],
      registers,
    }),
    refusals: new Counter({
      name: 'flotilla_hub_refusals_total',
      help: 'REST requests refused by a limit or the workload policy, by reason',
      labelNames: ['reason'],
      registers,
    }),
    rolloutWaits: new Gauge({
      name: 'flotilla_hub_rollout_waits',
      help: 'Member clusters of active rollouts waiting, by what they wait for (last scheduler tick)',
      labelNames: ['reason'],
      registers,
    }),
    schedulerLeader: new Gauge({
      name: 'flotilla_hub_scheduler_leader',
      help: 'Whether this replica leads the rollout scheduler (1) or stands by (0)',
      registers,
    }),
  };
}
