import type { TestProject } from 'vitest/node';
// Global setup runs outside the test resolver's conditions, so import the harness sources directly.
import { startEnvironment } from '../env/src/index.js';
import type { ClusterInfo, PkiInfo } from './helpers/context.js';
import { startConversionServer } from './helpers/conversion-server.js';

/**
 * Starts the run's clusters once; every integration suite shares them and isolates itself by
 * namespace. FLOTILLA_TEST_CLUSTERS sets how many (default 4: the rollout e2e suite's fleet is four
 * clusters), FLOTILLA_KEEP_ENV keeps logs.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const count = Number(process.env.FLOTILLA_TEST_CLUSTERS ?? 4);
  const t0 = performance.now();
  const [env, conversion] = await Promise.all([
    startEnvironment({
      clusters: Array.from({ length: count }, (_, i) => ({ name: `c${i + 1}`, nodes: 3 })),
      keep: Boolean(process.env.FLOTILLA_KEEP_ENV),
    }),
    startConversionServer(),
  ]);
  const clusters: ClusterInfo[] = env.clusters.map((c) => ({
    name: c.name,
    server: c.server,
    kubeconfig: c.kubeconfig,
    kubeconfigPath: c.kubeconfigPath,
    nodeNames: c.nodeNames,
  }));
  const pki: PkiInfo = { dir: env.pki.dir, caCert: env.pki.caCert, caKey: env.pki.caKey, caPem: env.pki.caPem };
  project.provide('clusters', clusters);
  project.provide('pki', pki);
  project.provide('envDir', env.dir);
  project.provide('conversion', { url: conversion.url, caPem: conversion.caPem });
  console.log(
    `[global-setup] ${count} clusters up in ${((performance.now() - t0) / 1000).toFixed(1)} s ` +
      `(per cluster: ${env.startSeconds.map((s) => s.toFixed(1)).join(', ')} s); logs in ${env.dir}`,
  );
  return async () => {
    await env.stop();
    await conversion.stop();
  };
}
