/** Prometheus metrics of the hub link, registered on an injected registry. */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface HubLinkMetrics {
  applied: Counter;
  pruned: Counter;
  /** Jobs deleted and created anew to run a changed template. */
  replaced: Counter;
  applyFailures: Counter;
  dropped: Counter<'reason'>;
  statusPublished: Counter;
  connected: Gauge;
  driftRepaired: Counter<'reason'>;
  released: Counter;
  /** Looks for the cluster's durable that found it missing (not created yet, or being repaired). */
  consumerMissing: Counter;
  /** Connections to the hub or NATS refused because the peer's certificate did not verify. */
  tlsFailures: Counter<'peer'>;
  /** Renewals of the NATS user JWT by result: renewed, refused (key revoked), failed (retried). */
  credentialRenewals: Counter<'result'>;
}

export function createHubLinkMetrics(registry: Registry): HubLinkMetrics {
  const registers = [registry];
  return {
    applied: new Counter({ name: 'flotilla_agent_hublink_applied_total', help: 'Desired objects applied', registers }),
    pruned: new Counter({ name: 'flotilla_agent_hublink_pruned_total', help: 'Managed objects deleted', registers }),
    replaced: new Counter({
      name: 'flotilla_agent_hublink_replaced_total',
      help: 'Jobs deleted and created anew to run a changed template',
      registers,
    }),
    applyFailures: new Counter({
      name: 'flotilla_agent_hublink_apply_failures_total',
      help: 'Applies or deletes that failed and will be retried',
      registers,
    }),
    dropped: new Counter({
      name: 'flotilla_agent_hublink_messages_dropped_total',
      help: 'Malformed, foreign or stale desired messages dropped',
      labelNames: ['reason'],
      registers,
    }),
    statusPublished: new Counter({
      name: 'flotilla_agent_hublink_status_published_total',
      help: 'Status reports sent to the hub',
      registers,
    }),
    driftRepaired: new Counter({
      name: 'flotilla_agent_hublink_drift_repaired_total',
      help: 'Managed objects changed or deleted behind the hub and re-applied',
      labelNames: ['reason'],
      registers,
    }),
    released: new Counter({
      name: 'flotilla_agent_hublink_released_total',
      help: "Objects left alone because they lost the managed-by label or were not the hub's to begin with",
      registers,
    }),
    consumerMissing: new Counter({
      name: 'flotilla_agent_hublink_consumer_missing_total',
      help: 'Times the desired-state consumer was missing (the hub creates it) and the agent waited for it',
      registers,
    }),
    credentialRenewals: new Counter({
      name: 'flotilla_agent_hublink_credential_renewals_total',
      help: 'Renewals of the NATS user JWT (result: renewed, refused: the key was revoked, failed: retried)',
      labelNames: ['result'],
      registers,
    }),
    tlsFailures: new Counter({
      name: 'flotilla_agent_hublink_tls_failures_total',
      help: 'Connections to the hub or NATS whose certificate did not verify against the configured CA (peer: hub, nats)',
      labelNames: ['peer'],
      registers,
    }),
    connected: new Gauge({
      name: 'flotilla_agent_hublink_connected',
      help: '1 while connected to NATS',
      registers,
    }),
  };
}
