export { loadKubeCredentials, type LoadedCredentials } from './load.js';
export { parseKubeconfig, type KubeconfigContext } from './parse.js';
export { inClusterContext, StaticKubeConfig, TOKEN_FILE_REREAD_MS } from './static-config.js';
export type { KubeCluster, KubeCredentials } from './types.js';
