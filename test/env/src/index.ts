export { HarnessError, type HarnessErrorCode } from './errors.js';
export { startCluster, fakeNode, KWOK_NODE_ANNOTATION, type Cluster, type ClusterOptions } from './cluster.js';
export { startEnvironment, type Environment, type EnvironmentOptions } from './environment.js';
export { startEtcd, type Etcd } from './etcd.js';
export { createPki, createCa, issueServingCert, type Pki, type TestCa, type IssuedCert } from './pki.js';
export { createNatsPki, type NatsPki } from './nats-pki.js';
export { createTestDatabase, localPostgres, type TestDatabase, type PostgresServer } from './postgres.js';
export { startPrivatePostgres, postgresBinDir, type PrivatePostgres } from './pg-server.js';
export {
  startNats,
  startNatsCluster,
  renderNatsConfig,
  type NatsServer,
  type NatsCluster,
  type NatsNode,
  type NatsClientTls,
  type NatsAuthRenderer,
  type NatsUser,
  type NatsPermissions,
} from './nats.js';
export { operatorModeAuth, type OperatorModeAuth } from './nats-auth.js';
export { startProcess, stopAll, waitFor, readLogTail, type ManagedProcess } from './process.js';
export { freePort, assertPortFree } from './ports.js';
export { startBalancer, type Balancer } from './balancer.js';
export { readRssBytes } from './memory.js';
export { caFetch } from './http.js';
export {
  toolPath,
  hasTool,
  toolsDir,
  readVersions,
  criApiProto,
  kruiseTool,
  ensureKruise,
  type ToolName,
  type KruiseTool,
} from './tools.js';
export { run } from './exec.js';
export { startContainerd, type Containerd, type ContainerdOptions } from './containerd.js';
export { startRegistry, pushTinyImage, type Registry, type RegistryAuth, type PushedImage } from './registry.js';
export {
  startPrometheus,
  startExporter,
  PROMETHEUS_TEST_USER,
  type BasicAuthUser,
  type Prometheus,
  type PrometheusOptions,
  type Exporter,
  type ScrapeTarget,
} from './prometheus.js';
