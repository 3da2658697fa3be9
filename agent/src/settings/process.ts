/**
 * Settings both commands (`agent manager`, `agent daemon`) share: the apiserver credentials, the
 * log level and the health server's address.
 */
import { LOG_LEVELS } from '../logger.js';
import { oneOf, text } from './kinds.js';
import type { SettingsReader } from './reader.js';
import type { SettingsTable } from './setting.js';

export const PROCESS_SETTINGS = {
  kubeconfig: {
    flag: 'kubeconfig',
    env: ['KUBECONFIG'],
    kind: text('path'),
    defaultHelp: 'else in-cluster credentials',
    help: 'kubeconfig file',
  },
  logLevel: {
    flag: 'log-level',
    env: ['FLOTILLA_LOG_LEVEL'],
    kind: oneOf(LOG_LEVELS, 'level'),
    default: 'info',
    help: LOG_LEVELS.join('|'),
  },
  healthHost: {
    flag: 'health-host',
    kind: text('host'),
    default: '0.0.0.0',
    help: 'address of /healthz, /readyz and /metrics',
  },
} satisfies SettingsTable;

/**
 * Checks the kubeconfig file: it must exist, and there must be one outside a cluster (in a pod,
 * KUBERNETES_SERVICE_HOST is set and the service account's credentials are used).
 */
export function checkKubeconfig(read: SettingsReader, path: string | undefined): void {
  const setting = PROCESS_SETTINGS.kubeconfig;
  if (path === undefined && !read.variable('KUBERNETES_SERVICE_HOST')) {
    read.problem(setting, 'required outside a cluster (no KUBERNETES_SERVICE_HOST)');
  } else if (path !== undefined && !read.host.fileExists(path)) {
    read.problem(setting, `file ${path} does not exist`);
  }
}
