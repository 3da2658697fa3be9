/**
 * Running the agent as the chart deploys it, but as processes of the test: a kubeconfig holding a
 * TokenRequest token of the chart's ServiceAccount (so every request is authorized by the chart's
 * RBAC, as in a pod), and the environment and arguments of the installed Deployment/DaemonSet.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { V1Container } from '@kubernetes/client-node';
import { renderKubeconfig } from '../../env/src/kubeconfig.js';
import { startProcess, waitFor, type ManagedProcess } from '@flotilla/test';
import type { Kube } from '../helpers/kube.js';
import { root } from './chart.js';

export interface Identity {
  token: string;
  kubeconfigPath: string;
}

/** A kubeconfig for `serviceAccount` in `namespace`, with a fresh bound token. */
export async function serviceAccountIdentity(
  k: Kube,
  server: string,
  caPem: string,
  namespace: string,
  serviceAccount: string,
  dir: string,
): Promise<Identity> {
  const request = await k.core.createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const token = request.status!.token;
  const kubeconfigPath = path.join(dir, `${serviceAccount}.kubeconfig`);
  writeFileSync(kubeconfigPath, renderKubeconfig({ name: serviceAccount, server, caPem, token }), { mode: 0o600 });
  return { token, kubeconfigPath };
}

/**
 * The container's environment with its downward-API values filled in as the kubelet would
 * (metadata.name, metadata.namespace, spec.nodeName); Secret references are left out.
 */
export function containerEnv(
  c: V1Container,
  pod: { name: string; namespace: string; node?: string },
): NodeJS.ProcessEnv {
  const fields: Record<string, string | undefined> = {
    'metadata.name': pod.name,
    'metadata.namespace': pod.namespace,
    'spec.nodeName': pod.node,
  };
  const env: NodeJS.ProcessEnv = {};
  for (const e of c.env ?? []) {
    const v = e.value ?? (e.valueFrom?.fieldRef ? fields[e.valueFrom.fieldRef.fieldPath] : undefined);
    if (v !== undefined) env[e.name] = v;
  }
  return env;
}

/** `agent <args>` from the sources (as the image runs dist/main.js), logging to `logFile`. */
export function startAgent(name: string, args: string[], env: NodeJS.ProcessEnv, logFile: string): ManagedProcess {
  return startProcess({
    name,
    command: process.execPath,
    args: ['--conditions=@flotilla/source', '--import', 'tsx', 'agent/src/main.ts', ...args],
    cwd: root,
    // Only what the pod would have (plus PATH/HOME for node itself): nothing of the test's own
    // environment (a KUBECONFIG, FLOTILLA_* of other suites) leaks into the agent.
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    logFile,
  });
}

/** Waits for a health server's /readyz; fails with the process's log tail. */
// tsx compiles the agent at start: on a loaded 2-core machine start and cache sync take a minute.
export async function waitReady(proc: ManagedProcess, port: number, timeoutMs = 150_000): Promise<void> {
  await waitFor(
    proc.name,
    async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;
      } catch {
        return false;
      }
    },
    { timeoutMs, process: proc, what: '/readyz not 200' },
  );
}
