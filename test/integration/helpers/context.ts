import { inject } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';

export interface ClusterInfo {
  name: string;
  server: string;
  kubeconfig: string;
  kubeconfigPath: string;
  nodeNames: string[];
}

export interface PkiInfo {
  dir: string;
  caCert: string;
  caKey: string;
  caPem: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    clusters: ClusterInfo[];
    pki: PkiInfo;
    envDir: string;
    /** The run's conversion webhook (helpers/conversion-server.ts). */
    conversion: { url: string; caPem: string };
  }
}

/** The run's shared clusters (started once in global-setup). */
export function clusters(): ClusterInfo[] {
  return inject('clusters');
}

export function cluster(index: number): ClusterInfo {
  const c = clusters()[index];
  if (!c) throw new Error(`the run has no cluster #${index}; set FLOTILLA_TEST_CLUSTERS`);
  return c;
}

export function kubeConfigOf(c: ClusterInfo): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(c.kubeconfig);
  return kc;
}
