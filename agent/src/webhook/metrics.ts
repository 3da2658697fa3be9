/**
 * What the admission server reports. In the agent's main thread these are prom-client metrics on
 * the agent's registry; in the admission thread (thread/worker.ts) they are batched to the main
 * thread, which records them on the same metrics, so /metrics looks the same either way.
 */
import { Counter, Histogram, type Registry } from 'prom-client';

export interface WebhookServerMetrics {
  /** One answered admission review: its path, whether it was allowed, and its duration. */
  observe(path: string, allowed: boolean, seconds: number): void;
  /** A TLS connection was accepted (each one cost a handshake). */
  connection(): void;
  /** A review was dropped because its caller had already closed the connection. */
  abandoned(): void;
}

/** The webhook server's metrics on `registry`. */
export function promWebhookMetrics(registry: Registry): WebhookServerMetrics {
  const latency = new Histogram({
    name: 'flotilla_webhook_admission_duration_seconds',
    help: 'Time to answer an admission review, by path and whether it was allowed',
    labelNames: ['path', 'allowed'],
    // Fine below 10 ms: the pod webhook's budget is a p99 under 10 ms (test/bench/webhook).
    buckets: [
      0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.5,
      1,
    ],
    registers: [registry],
  });
  // Each connection costs a TLS handshake; a count growing with the request rate means the
  // apiserver is not reusing connections.
  const connections = new Counter({
    name: 'flotilla_webhook_tls_connections_total',
    help: 'TLS connections accepted by the admission webhook server',
    registers: [registry],
  });
  const abandoned = new Counter({
    name: 'flotilla_webhook_abandoned_total',
    help: 'Admission reviews not handled because the caller had closed the connection (its timeout passed)',
    registers: [registry],
  });
  return {
    observe: (path, allowed, seconds) => latency.observe({ path, allowed: String(allowed) }, seconds),
    connection: () => connections.inc(),
    abandoned: () => abandoned.inc(),
  };
}
