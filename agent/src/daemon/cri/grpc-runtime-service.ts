/** The CRI RuntimeService over gRPC on the runtime's unix socket (see grpc.ts). */
import type grpc from '@grpc/grpc-js';
import { CRI_PROTO_PATH, criClient, unary } from './grpc.js';
import type { RuntimeContainer, RuntimeContainerState, RuntimeService } from './runtime-service.js';

interface WireContainer {
  id?: string;
  podSandboxId?: string;
  metadata?: { name?: string; attempt?: number };
  state?: RuntimeContainerState;
  createdAt?: string;
  labels?: Record<string, string>;
}

/** CRI times are int64 nanoseconds, which proto-loader hands out as strings. */
const nanosToMs = (value: string | undefined): number => (value ? Number(BigInt(value) / 1_000_000n) : 0);

function toContainer(c: WireContainer): RuntimeContainer {
  return {
    id: c.id ?? '',
    podSandboxId: c.podSandboxId ?? '',
    name: c.metadata?.name ?? '',
    attempt: c.metadata?.attempt ?? 0,
    state: c.state ?? 'CONTAINER_UNKNOWN',
    createdAtMs: nanosToMs(c.createdAt),
    labels: c.labels ?? {},
  };
}

export interface GrpcRuntimeServiceOptions {
  socketPath: string;
  protoPath?: string;
}

export function createGrpcRuntimeService(options: GrpcRuntimeServiceOptions): RuntimeService {
  const client = criClient<grpc.Client>('RuntimeService', options.socketPath, options.protoPath ?? CRI_PROTO_PATH);
  return {
    async listContainers(labels, opts = {}) {
      const res = await unary<unknown, { containers?: WireContainer[] }>(
        client,
        'listContainers',
        { filter: { labelSelector: labels } },
        opts,
      );
      return (res.containers ?? []).map(toContainer);
    },
    async startedAt(containerId, opts = {}) {
      const res = await unary<unknown, { status?: { startedAt?: string } | null }>(
        client,
        'containerStatus',
        { containerId, verbose: false },
        opts,
      );
      const ms = nanosToMs(res.status?.startedAt);
      return ms > 0 ? ms : undefined;
    },
    async execSync(containerId, cmd, timeoutSeconds, opts = {}) {
      const res = await unary<unknown, { exitCode?: number }>(
        client,
        'execSync',
        { containerId, cmd, timeout: timeoutSeconds },
        opts,
      );
      return res.exitCode ?? 0;
    },
    async sandboxIp(podSandboxId, opts = {}) {
      const res = await unary<unknown, { status?: { network?: { ip?: string } | null } | null }>(
        client,
        'podSandboxStatus',
        { podSandboxId, verbose: false },
        opts,
      );
      return res.status?.network?.ip ?? '';
    },
    async stopContainer(containerId, timeoutSeconds, opts = {}) {
      await unary(client, 'stopContainer', { containerId, timeout: timeoutSeconds }, opts);
    },
    close: () => client.close(),
  };
}
