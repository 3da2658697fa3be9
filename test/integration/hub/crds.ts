/**
 * Installs the generated Kruise CRDs (deploy/crds) into a cluster with server-side apply, as
 * helpers/crds.ts prepares them (pointing the conversion webhook at the run's server). Uses
 * kubectl: client-node's typed serializer would drop `x-kubernetes-*` keys given as raw JSON.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { run, toolPath } from '@flotilla/test';
import { stringify } from 'yaml';
import type { ClusterInfo } from '../helpers/context.js';
import { loadCrds } from '../helpers/crds.js';

export async function installCrds(cluster: ClusterInfo): Promise<void> {
  const CRD_DIR = mkdtempSync(path.join(tmpdir(), 'flotilla-crds-'));
  for (const crd of loadCrds()) writeFileSync(path.join(CRD_DIR, `${crd.metadata!.name!}.yaml`), stringify(crd));
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
