/** Cluster health from its registration state and the age of its last heartbeat. */
import type { ClusterHealth, ClusterState } from '@flotilla/api';

export function clusterHealth(
  state: ClusterState,
  lastHeartbeatAt: Date | null,
  now: Date,
  heartbeatTimeoutMs: number,
): ClusterHealth {
  if (state === 'pending') return 'Pending';
  if (state === 'removed') return 'Removed';
  if (!lastHeartbeatAt) return 'Offline';
  return now.getTime() - lastHeartbeatAt.getTime() <= heartbeatTimeoutMs ? 'Online' : 'Offline';
}
