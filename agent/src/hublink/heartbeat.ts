/** Periodic heartbeats: liveness plus agent and Kubernetes versions for the hub's cluster view. */
import { PROTOCOL_VERSION, encodeMessage, heartbeatSubject } from '@flotilla/api';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { Logger } from 'pino';

export interface HeartbeatDeps {
  cluster: string;
  /** This link session's id (see HeartbeatMessage.linkId). */
  linkId: string;
  agentVersion: string;
  kubernetesVersion: () => Promise<string>;
  managedObjects: () => number;
  js: () => JetStreamClient | undefined;
  logger: Logger;
  intervalMs: number;
}

export interface Heartbeat {
  /** Sends one heartbeat now. */
  beat(): Promise<void>;
  stop(): void;
}

export function startHeartbeat(deps: HeartbeatDeps): Heartbeat {
  let k8sVersion = '';
  const beat = async (): Promise<void> => {
    const js = deps.js();
    if (!js) return;
    if (k8sVersion === '') k8sVersion = await deps.kubernetesVersion().catch(() => '');
    await js.publish(
      heartbeatSubject(deps.cluster),
      encodeMessage({
        v: PROTOCOL_VERSION,
        cluster: deps.cluster,
        agentVersion: deps.agentVersion,
        kubernetesVersion: k8sVersion,
        managedObjects: deps.managedObjects(),
        linkId: deps.linkId,
        sentAt: new Date().toISOString(),
      }),
    );
  };
  const timer = setInterval(() => {
    beat().catch((err: unknown) => deps.logger.debug({ err }, 'heartbeat failed'));
  }, deps.intervalMs);
  return { beat, stop: () => clearInterval(timer) };
}
