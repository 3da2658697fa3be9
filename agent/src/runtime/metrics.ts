import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { InformerMetrics } from './informer.js';
import type { LeaderMetrics } from './leader-election.js';
import type { QueueMetrics } from './workqueue.js';

/** How one reconcile ended. */
export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'requeue_after';

/** What a controller reports about its reconciles. */
export interface ReconcileMetrics {
  observe(outcome: ReconcileOutcome, seconds: number): void;
}

/**
 * The runtime's Prometheus metrics, registered on an injected registry (never prom-client's
 * global one, so tests and several managers in one process don't collide). Each component gets a
 * small labelled view through queue(), informer(), reconcile() and leader().
 */
export class RuntimeMetrics {
  readonly #reconciles: Counter<'controller' | 'result'>;
  readonly #reconcileErrors: Counter<'controller'>;
  readonly #reconcileDuration: Histogram<'controller'>;
  readonly #queueDepth: Gauge<'name'>;
  readonly #queueAdds: Counter<'name'>;
  readonly #queueRetries: Counter<'name'>;
  readonly #workDuration: Histogram<'name'>;
  readonly #relists: Counter<'informer'>;
  readonly #restarts: Counter<'informer'>;
  readonly #watches: Counter<'informer'>;
  readonly #leader: Gauge<'lease'>;

  constructor(readonly registry: Registry) {
    const registers = [registry];
    const seconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
    this.#reconciles = new Counter({
      name: 'flotilla_agent_reconcile_total',
      help: 'Reconciles by controller and result (success, error, requeue, requeue_after)',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.#reconcileErrors = new Counter({
      name: 'flotilla_agent_reconcile_errors_total',
      help: 'Reconciles that threw, by controller',
      labelNames: ['controller'],
      registers,
    });
    this.#reconcileDuration = new Histogram({
      name: 'flotilla_agent_reconcile_duration_seconds',
      help: 'Time spent in one reconcile, by controller',
      labelNames: ['controller'],
      buckets: seconds,
      registers,
    });
    this.#queueDepth = new Gauge({
      name: 'flotilla_agent_workqueue_depth',
      help: 'Keys waiting in a work queue',
      labelNames: ['name'],
      registers,
    });
    this.#queueAdds = new Counter({
      name: 'flotilla_agent_workqueue_adds_total',
      help: 'Keys added to a work queue (after de-duplication)',
      labelNames: ['name'],
      registers,
    });
    this.#queueRetries = new Counter({
      name: 'flotilla_agent_workqueue_retries_total',
      help: 'Rate-limited re-adds to a work queue',
      labelNames: ['name'],
      registers,
    });
    this.#workDuration = new Histogram({
      name: 'flotilla_agent_workqueue_work_duration_seconds',
      help: 'Time from taking a key off a work queue to marking it done',
      labelNames: ['name'],
      buckets: seconds,
      registers,
    });
    this.#relists = new Counter({
      name: 'flotilla_agent_informer_relists_total',
      help: 'Full relists after the first list (410 Gone, relist timer, on request)',
      labelNames: ['informer'],
      registers,
    });
    this.#restarts = new Counter({
      name: 'flotilla_agent_informer_restarts_total',
      help: 'List/watch failures after which the informer backed off and restarted',
      labelNames: ['informer'],
      registers,
    });
    this.#watches = new Counter({
      name: 'flotilla_agent_informer_watches_total',
      help: 'Watch requests: the first and each resume after the apiserver ended a watch (timeout, or a watcher that fell behind)',
      labelNames: ['informer'],
      registers,
    });
    this.#leader = new Gauge({
      name: 'flotilla_agent_leader_election_is_leader',
      help: '1 while this replica holds the lease',
      labelNames: ['lease'],
      registers,
    });
  }

  queue(name: string): QueueMetrics {
    const labels = { name };
    return {
      setDepth: (depth) => this.#queueDepth.set(labels, depth),
      incAdds: () => this.#queueAdds.inc(labels),
      incRetries: () => this.#queueRetries.inc(labels),
      observeWorkDuration: (s) => this.#workDuration.observe(labels, s),
    };
  }

  informer(name: string): InformerMetrics {
    const labels = { informer: name };
    return {
      incRelists: () => this.#relists.inc(labels),
      incRestarts: () => this.#restarts.inc(labels),
      incWatches: () => this.#watches.inc(labels),
    };
  }

  reconcile(controller: string): ReconcileMetrics {
    return {
      observe: (outcome, s) => {
        this.#reconciles.inc({ controller, result: outcome });
        if (outcome === 'error') this.#reconcileErrors.inc({ controller });
        this.#reconcileDuration.observe({ controller }, s);
      },
    };
  }

  leader(lease: string): LeaderMetrics {
    this.#leader.set({ lease }, 0);
    return { setLeader: (leading) => this.#leader.set({ lease }, leading ? 1 : 0) };
  }
}
