/**
 * The node daemon's configuration, in the table form of settings/setting.ts: flags first, then
 * the environment (NODE_NAME is what OpenKruise's DaemonSet sets from the downward API),
 * validated once at start.
 */
import type { LogLevel } from '../logger.js';
import { dnsSubdomain, limit, port, text } from '../settings/kinds.js';
import { checkKubeconfig, PROCESS_SETTINGS } from '../settings/process.js';
import { SettingsReader, realHost, type ConfigHost, type Env, type Flags } from '../settings/reader.js';
import type { SettingsTable } from '../settings/setting.js';

export interface DaemonConfig {
  nodeName: string;
  /** Undefined: in-cluster credentials. */
  kubeconfig: string | undefined;
  socketFile: string | undefined;
  runDir: string;
  /** Undefined: no health server. */
  health: { host: string; port: number } | undefined;
  logLevel: LogLevel;
  /** Pulls running at once on the node; -1: no limit. Further pulls report Waiting. */
  maxPullWorkers: number;
}

export const DAEMON_SETTINGS = {
  nodeName: {
    flag: 'node',
    env: ['NODE_NAME'],
    kind: dnsSubdomain('a node name'),
    required: true,
    help: 'name of this node and its NodeImage',
  },
  ...PROCESS_SETTINGS,
  socketFile: {
    flag: 'socket-file',
    kind: text('path'),
    defaultHelp: 'default: probe containerd, CRI-O, cri-dockerd',
    help: 'CRI runtime socket',
  },
  runDir: {
    flag: 'run-dir',
    kind: text('dir'),
    default: '/var/run',
    help: 'where to probe for runtime sockets',
  },
  healthPort: {
    flag: 'health-port',
    kind: port(),
    defaultHelp: 'default: none',
    help: 'port of /healthz, /readyz and /metrics',
  },
  maxPullWorkers: {
    flag: 'max-workers-for-pull-image',
    kind: limit(10_000),
    default: -1,
    help: 'pulls running at once on this node (-1: no limit); the rest report Waiting, as in OpenKruise v1.9',
  },
} satisfies SettingsTable;

/** Validates the flags; throws DAEMON_ERR_CONFIG naming every problem. */
export function loadDaemonConfig(flags: Flags, env: Env, host: ConfigHost = realHost): DaemonConfig {
  const read = new SettingsReader(flags, env, host);
  const { healthHost, healthPort, ...daemon } = read.read(DAEMON_SETTINGS);
  checkKubeconfig(read, daemon.kubeconfig);
  read.check('DAEMON_ERR_CONFIG');
  return { ...daemon, health: healthPort === undefined ? undefined : { host: healthHost, port: healthPort } };
}
