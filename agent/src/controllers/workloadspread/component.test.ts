import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { AgentConfig } from '../../config.js';
import type { ComponentContext } from '../../runtime/component.js';
import { defaultWebhookConfig } from '../../webhook/config.js';
import { setupWorkloadSpreadController, workloadSpreadComponent } from './component.js';

/** A context whose manager records the informers and controllers registered. */
function context(workloadSpreadGate: boolean): { ctx: ComponentContext<AgentConfig>; registered: string[] } {
  const registered: string[] = [];
  const informer = { list: () => [], get: () => undefined, byIndex: () => [] };
  const manager = {
    informer: (o: { resource: { plural: string }; namespace?: string }) => (
      registered.push(`informer:${o.resource.plural}${o.namespace ? ` in ${o.namespace}` : ''}`),
      informer
    ),
    controller: (o: { name: string }) => (registered.push(`controller:${o.name}`), { watch: () => undefined }),
    addReadinessCheck: () => undefined,
  };
  const config = {
    namespace: 'agents',
    webhook: { ...defaultWebhookConfig('agents'), workloadSpreadGate },
  } as unknown as AgentConfig;
  const ctx = {
    manager,
    rest: {},
    config,
    logger: pino({ level: 'silent' }),
    registry: {},
    events: () => ({ event: () => undefined }),
    run: () => undefined,
  } as unknown as ComponentContext<AgentConfig>;
  return { ctx, registered };
}

describe('workloadSpreadComponent', () => {
  it('registers the controller, watching nodes for adoption, with the WorkloadSpread gate on', async () => {
    const { ctx, registered } = context(true);
    await workloadSpreadComponent.setup(ctx);
    expect(registered).toContain('controller:workloadspread');
    expect(registered).toContain('informer:nodes');
  });

  it('registers nothing with the gate off, as OpenKruise does not start it', async () => {
    const { ctx, registered } = context(false);
    await workloadSpreadComponent.setup(ctx);
    expect(registered).toEqual([]);
  });

  it('narrows what it watches to one namespace when asked (agents on clusters other suites share)', () => {
    const { ctx, registered } = context(true);
    setupWorkloadSpreadController(ctx, { namespace: 'apps' });
    expect(registered).toContain('informer:workloadspreads in apps');
    expect(registered).toContain('informer:pods in apps');
    // Nodes are cluster-scoped: adoption reads them all.
    expect(registered).toContain('informer:nodes');
  });
});
