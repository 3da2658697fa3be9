import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RuntimeMetrics } from './metrics.js';

describe('RuntimeMetrics', () => {
  it('exposes every component view on the injected registry only', async () => {
    const registry = new Registry();
    const m = new RuntimeMetrics(registry);
    const q = m.queue('cloneset');
    q.setDepth(3);
    q.incAdds();
    q.incRetries();
    q.observeWorkDuration(0.2);
    m.informer('pods').incRelists();
    m.informer('pods').incRestarts();
    m.informer('pods').incWatches();
    m.informer('pods').incWatches();
    const r = m.reconcile('cloneset');
    r.observe('success', 0.01);
    r.observe('error', 0.02);
    m.leader('flotilla-system/agent').setLeader(true);
    const text = await registry.metrics();
    expect(text).toContain('flotilla_agent_workqueue_depth{name="cloneset"} 3');
    expect(text).toContain('flotilla_agent_workqueue_adds_total{name="cloneset"} 1');
    expect(text).toContain('flotilla_agent_workqueue_retries_total{name="cloneset"} 1');
    expect(text).toContain('flotilla_agent_informer_relists_total{informer="pods"} 1');
    expect(text).toContain('flotilla_agent_informer_restarts_total{informer="pods"} 1');
    expect(text).toContain('flotilla_agent_informer_watches_total{informer="pods"} 2');
    expect(text).toContain('flotilla_agent_reconcile_total{controller="cloneset",result="success"} 1');
    expect(text).toContain('flotilla_agent_reconcile_errors_total{controller="cloneset"} 1');
    expect(text).toContain('flotilla_agent_reconcile_duration_seconds_count{controller="cloneset"} 2');
    expect(text).toContain('flotilla_agent_leader_election_is_leader{lease="flotilla-system/agent"} 1');
    // A second set of metrics on another registry does not collide.
    expect(() => new RuntimeMetrics(new Registry())).not.toThrow();
  });
});
