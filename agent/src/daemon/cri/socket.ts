/**
 * Finding the container runtime's socket, as kruise-daemon does (criruntime/factory.go): an
 * explicit `--socket-file` wins, otherwise the well-known sockets of containerd, CRI-O and
 * cri-dockerd are probed in that order under the runtime directory (`/var/run` on a node,
 * `/hostvarrun` inside OpenKruise's DaemonSet).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { AgentError } from '../../errors.js';

export const WELL_KNOWN_SOCKETS = [
  'containerd.sock',
  'containerd/containerd.sock',
  'crio.sock',
  'crio/crio.sock',
  'cri-dockerd.sock',
] as const;

export interface SocketChoice {
  /** `--socket-file`: used as given. */
  socketFile?: string;
  /** Where to probe; default /var/run. */
  runDir?: string;
  /** Injected for tests. */
  exists?: (p: string) => boolean;
}

/** The socket to dial; throws DAEMON_ERR_CRI_UNAVAILABLE naming every path probed. */
export function resolveRuntimeSocket(choice: SocketChoice = {}): string {
  const exists = choice.exists ?? existsSync;
  if (choice.socketFile) {
    if (!exists(choice.socketFile)) {
      throw new AgentError('DAEMON_ERR_CRI_UNAVAILABLE', `runtime socket ${choice.socketFile} does not exist`);
    }
    return choice.socketFile;
  }
  const candidates = WELL_KNOWN_SOCKETS.map((s) => path.join(choice.runDir ?? '/var/run', s));
  const found = candidates.find((p) => exists(p));
  if (!found) {
    throw new AgentError(
      'DAEMON_ERR_CRI_UNAVAILABLE',
      `no container runtime socket found (probed ${candidates.join(', ')}); pass --socket-file`,
    );
  }
  return found;
}
