import { Command, Option } from 'commander';
import type { ManagerFlags } from './config.js';
import { addWebhookOptions } from './webhook/config.js';

/** What the commands do; injected so the parsing is testable without starting anything. */
export interface CliActions {
  manager(flags: ManagerFlags): Promise<void>;
}

/**
 * The `agent` command line. Flags are handed over as given; defaults, environment fallbacks and
 * validation live in loadConfig so that every entry point validates the same way.
 */
export function buildCli(actions: CliActions): Command {
  const program = new Command('agent').description('Flotilla cluster agent').showHelpAfterError();
  // The webhook's flags come from the table that also validates them (webhook/config.ts).
  addWebhookOptions(program.command('manager'))
    .description(
      'run the components (controllers, webhook, hub link), with leader election, health and metrics endpoints',
    )
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, else in-cluster credentials)')
    .option('--cluster-name <name>', 'name of this cluster in the fleet ($FLOTILLA_CLUSTER_NAME)')
    .option('--identity <id>', 'leader election identity ($POD_NAME, else hostname_random)')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent ($FLOTILLA_LOG_LEVEL, default info)')
    .option('--health-host <host>', 'address of /healthz, /readyz and /metrics (default 0.0.0.0)')
    .option('--health-port <port>', 'port of /healthz, /readyz and /metrics ($FLOTILLA_HEALTH_PORT, default 8080)')
    .addOption(new Option('--no-leader-elect', 'run without leader election (a single replica only)'))
    .addOption(
      new Option(
        '--no-kube-api-http2',
        'talk HTTP/1.1 to the apiserver instead of HTTP/2 (FLOTILLA_KUBE_API_HTTP2=false; watches always use HTTP/1.1)',
      ),
    )
    .option(
      '--namespace <ns>',
      "the agent's own namespace: join Secret, webhook certificates ($FLOTILLA_NAMESPACE, else $POD_NAMESPACE, default flotilla-system)",
    )
    .option('--lease-namespace <ns>', 'namespace of the leader election Lease (default: --namespace)')
    .option('--lease-name <name>', 'name of the leader election Lease (default flotilla-agent)')
    .option('--lease-duration <duration>', 'lease validity without renewal (default 15s)')
    .option('--renew-deadline <duration>', 'the leader steps down if it cannot renew for this long (default 10s)')
    .option('--retry-period <duration>', 'pause between acquire/renew attempts (default 2s)')
    .option('--shutdown-timeout <duration>', 'time for in-flight reconciles to finish on SIGTERM (default 30s)')
    .option('--cache-sync-timeout <duration>', 'startup fails if caches have not synced by then (default 2m)')
    .option(
      '--components <list>',
      'components to run (controllers, webhook, hublink): *, names, -name to leave one out; empty runs none ($FLOTILLA_COMPONENTS, default *)',
    )
    .option('--hub-url <url>', "the hub's REST API; without it the agent runs standalone ($FLOTILLA_HUB_URL)")
    .option(
      '--bootstrap-token <token>',
      'token to register with the hub, needed until joined ($FLOTILLA_BOOTSTRAP_TOKEN)',
    )
    .option('--bootstrap-token-file <path>', 'file holding the bootstrap token ($FLOTILLA_BOOTSTRAP_TOKEN_FILE)')
    .option('--cluster-labels <k=v,...>', 'labels this cluster registers with ($FLOTILLA_CLUSTER_LABELS)')
    .option(
      '--join-secret <name>',
      'Secret in --namespace holding the join state and NATS credentials ($FLOTILLA_JOIN_SECRET, default flotilla-agent-join)',
    )
    .option('--nats-url <url>', 'NATS servers to use instead of those in the credentials ($FLOTILLA_NATS_URL)')
    .action((flags: ManagerFlags) => actions.manager(flags));
  return program;
}
