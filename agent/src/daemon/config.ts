/**
 * The node daemon's configuration: flags first, then the environment (NODE_NAME is what
 * OpenKruise's DaemonSet sets from the downward API), validated once at start.
 */
import { LOG_LEVELS, type LogLevel } from '../config.js';
import { AgentError } from '../errors.js';

export interface DaemonFlags {
  node?: string;
  kubeconfig?: string;
  socketFile?: string;
  runDir?: string;
  healthHost?: string;
  healthPort?: string;
  logLevel?: string;
}

export interface DaemonConfig {
  nodeName: string;
  /** Undefined: in-cluster credentials. */
  kubeconfig: string | undefined;
  socketFile: string | undefined;
  runDir: string;
  /** Undefined: no health server. */
  health: { host: string; port: number } | undefined;
  logLevel: LogLevel;
}

/** Validates the flags; throws DAEMON_ERR_CONFIG naming every problem. */
export function loadDaemonConfig(flags: DaemonFlags, env: Readonly<Record<string, string | undefined>>): DaemonConfig {
  const problems: string[] = [];
  const nodeName = flags.node ?? env.NODE_NAME ?? '';
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(nodeName)) {
    problems.push(
      nodeName ? `--node (NODE_NAME): ${JSON.stringify(nodeName)} is not a node name` : '--node (NODE_NAME): required',
    );
  }
  const kubeconfig = flags.kubeconfig ?? (env.KUBECONFIG || undefined);
  if (!kubeconfig && !env.KUBERNETES_SERVICE_HOST)
    problems.push('--kubeconfig (KUBECONFIG): required outside a cluster');
  const level = flags.logLevel ?? env.FLOTILLA_LOG_LEVEL ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level))
    problems.push(`--log-level: must be one of ${LOG_LEVELS.join('|')}`);
  let health: DaemonConfig['health'];
  if (flags.healthPort !== undefined) {
    const port = Number(flags.healthPort);
    if (!Number.isInteger(port) || port < 0 || port > 65535) problems.push('--health-port: must be a port number');
    health = { host: flags.healthHost ?? '0.0.0.0', port };
  }
  if (problems.length > 0) throw new AgentError('DAEMON_ERR_CONFIG', problems.join('; '));
  return {
    nodeName,
    kubeconfig,
    socketFile: flags.socketFile,
    runDir: flags.runDir ?? '/var/run',
    health,
    logLevel: level as LogLevel,
  };
}
