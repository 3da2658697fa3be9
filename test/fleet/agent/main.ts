/**
 * `agent manager` for clusters that other test suites share: the same flags, configuration,
 * wiring (createAgentManager: health, leader election) and components as agent/src/main.ts,
 * except that the CloneSet, Advanced StatefulSet, Advanced DaemonSet, PodUnavailableBudget and
 * WorkloadSpread controllers watch one namespace (the DaemonSet controller also only the Nodes
 * FLOTILLA_TEST_NODE_SELECTOR selects, when set). The stock ones watch every namespace and would
 * reconcile the other suites' objects alongside their own controllers. The CloneSet, budget and
 * spread controllers are set up by the stock components' own functions, so they get the same
 * settings from the configuration (the CloneSet its PodUnavailableBudget guard under
 * --pub-update-gate, the spread controller its gate).
 *
 * With FLOTILLA_TEST_SCOPE_LABEL=key=value every other component is narrowed too, so the whole
 * agent can run on a shared cluster: pod readiness to the namespace; the SidecarSet controller,
 * the ImagePullJob and NodeImage controllers to objects (SidecarSets, jobs, Nodes) carrying the
 * label; the webhook to namespaces and cluster-scoped objects carrying it, under configuration
 * names of its own, leaving the CRDs' conversion to the run's server. Storage migration rewrites
 * the shared CRDs and is left out.
 *
 *   node --conditions=@flotilla/source --import tsx test/fleet/agent/main.ts <namespace> manager [flags]
 */
import { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { createAgentManager } from '../../../agent/src/app.js';
import { buildCli } from '../../../agent/src/cli.js';
import { loadConfig, type AgentConfig } from '../../../agent/src/config.js';
import { components } from '../../../agent/src/components.js';
import { cloneSetComponent, setupCloneSetController } from '../../../agent/src/controllers/cloneset/component.js';
import { daemonSetComponent } from '../../../agent/src/controllers/daemonset/component.js';
import { registerDaemonSetController } from '../../../agent/src/controllers/daemonset/index.js';
import {
  podUnavailableBudgetComponent,
  setupPubController,
} from '../../../agent/src/controllers/podunavailablebudget/component.js';
import { statefulSetComponent } from '../../../agent/src/controllers/statefulset/component.js';
import { registerStatefulSetController } from '../../../agent/src/controllers/statefulset/index.js';
import {
  setupWorkloadSpreadController,
  workloadSpreadComponent,
} from '../../../agent/src/controllers/workloadspread/component.js';
import { createRootLogger } from '../../../agent/src/logger.js';
import type { Component } from '../../../agent/src/runtime/component.js';
import type { Flags } from '../../../agent/src/settings/reader.js';
import { labelScoped, scopeWebhook } from './scoped.js';

const [, , watchNamespace, ...args] = process.argv;
if (!watchNamespace) {
  process.stderr.write('usage: test/fleet/agent/main.ts <namespace> manager [flags]\n');
  process.exit(2);
}

const scopeLabel = process.env.FLOTILLA_TEST_SCOPE_LABEL;
const nodeSelector = process.env.FLOTILLA_TEST_NODE_SELECTOR;

const scope = { namespace: watchNamespace };

const scopedCloneSet: Component<AgentConfig> = {
  ...cloneSetComponent,
  setup: (ctx) => void setupCloneSetController(ctx, scope),
};

const scopedPub: Component<AgentConfig> = {
  ...podUnavailableBudgetComponent,
  setup: (ctx) => void setupPubController(ctx, scope),
};

const scopedWorkloadSpread: Component<AgentConfig> = {
  ...workloadSpreadComponent,
  setup: (ctx) => setupWorkloadSpreadController(ctx, scope),
};

const scopedStatefulSet: Component<AgentConfig> = {
  ...statefulSetComponent,
  setup(ctx) {
    registerStatefulSetController(ctx.manager, {
      rest: ctx.rest,
      events: ctx.events('statefulset'),
      namespace: watchNamespace,
    });
  },
};

const scopedDaemonSet: Component<AgentConfig> = {
  ...daemonSetComponent,
  setup(ctx) {
    registerDaemonSetController(ctx.manager, {
      rest: ctx.rest,
      events: ctx.events('daemonset'),
      namespace: watchNamespace,
      ...(nodeSelector ? { nodeSelector } : {}),
    });
  },
};

const namespaced = new Map<Component<AgentConfig>, Component<AgentConfig>>([
  [cloneSetComponent, scopedCloneSet],
  [statefulSetComponent, scopedStatefulSet],
  [daemonSetComponent, scopedDaemonSet],
  [podUnavailableBudgetComponent, scopedPub],
  [workloadSpreadComponent, scopedWorkloadSpread],
]);

/** The stock components with the set controllers scoped, and with a label everything else. */
function scopedComponents(): Component<AgentConfig>[] {
  const list = components.map((c) => namespaced.get(c) ?? c);
  return scopeLabel ? labelScoped(list, watchNamespace!, scopeLabel) : list;
}

async function runManager(flags: Flags): Promise<void> {
  const loaded = loadConfig(flags, process.env);
  const config = scopeLabel ? scopeWebhook(loaded, scopeLabel) : loaded;
  const logger = createRootLogger(config.logLevel);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(config.kubeconfig!);
  const manager = await createAgentManager({
    config,
    kubeConfig,
    logger,
    registry: new Registry(),
    components: scopedComponents(),
  });
  const onSignal = (signal: NodeJS.Signals): void => void manager.stop(signal);
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  await manager.start();
}

await buildCli({ manager: runManager }).parseAsync([process.argv[0]!, 'agent', ...args]);
