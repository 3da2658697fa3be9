/**
 * Installs the generated Kruise CRDs (deploy/crds) into a cluster with server-side apply. Uses
 * kubectl: client-node's typed serializer would drop `x-kubernetes-*` keys given as raw JSON.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, toolPath } from '@flotilla/test';
import type { ClusterInfo } from '../helpers/context.js';

const CRD_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../deploy/crds');

export async function installCrds(cluster: ClusterInfo): Promise<void> {
  const kubectl = ['--kubeconfig', cluster.kubeconfigPath];
  await run('kubectl', toolPath('kubectl'), [
    ...kubectl,
    'apply',
    '--server-side',
    '--force-conflicts',
    '--field-manager=flotilla-test',
    '-f',
    CRD_DIR,
  ]);
  await run('kubectl', toolPath('kubectl'), [
    ...kubectl,
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    '-f',
    CRD_DIR,
  ]);
}
