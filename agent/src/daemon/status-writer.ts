/**
 * Publishes the daemon's NodeImage status with a merge patch on the status subresource: the
 * daemon owns what it reports and never needs a resourceVersion, so the NodeImage controller's
 * concurrent spec updates never make it retry. Writes are skipped when nothing changed and rate
 * limited (kruise-daemon: 0.5 per second, bursts of 5) so a burst of tag changes coalesces.
 */
import type { NodeImage, NodeImageStatus } from '@flotilla/api';
import type { Clock } from '../runtime/clock.js';
import { resourcePath, Resources } from '../runtime/resource.js';
import { PatchType, type KubeRest } from '../runtime/rest.js';
import { statusPatch } from './status.js';
import { sameJson } from '../runtime/kube-object.js';

export interface StatusWriterOptions {
  /** Writes allowed in a burst; default 5. */
  burst?: number;
  /** Sustained writes per second; default 0.5. */
  qps?: number;
}

export interface StatusWriter {
  /**
   * Writes `next` unless `current` already shows it. Resolves 0 when written or unchanged, or
   * how many ms to wait before trying again when the rate limit held the write back.
   */
  write(current: NodeImage, next: NodeImageStatus): Promise<number>;
}

/** The patch sender, separated so the rate limiting is tested without an apiserver. */
export type StatusPatcher = (name: string, patch: Record<string, unknown>) => Promise<unknown>;

export function kubeStatusPatcher(rest: KubeRest): StatusPatcher {
  return (name, patch) =>
    rest.request({
      method: 'PATCH',
      path: resourcePath(Resources.nodeImages, undefined, name, 'status'),
      contentType: PatchType.merge,
      body: patch,
    });
}

export function createStatusWriter(
  patch: StatusPatcher,
  clock: Clock,
  options: StatusWriterOptions = {},
): StatusWriter {
  const burst = options.burst ?? 5;
  const qps = options.qps ?? 0.5;
  let tokens = burst;
  let last = clock.now();
  return {
    async write(current, next) {
      if (sameJson(comparable(current.status), comparable(next))) return 0;
      const now = clock.now();
      tokens = Math.min(burst, tokens + ((now - last) / 1000) * qps);
      last = now;
      if (tokens < 1) return Math.ceil(((1 - tokens) / qps) * 1000);
      tokens -= 1;
      await patch(current.metadata?.name ?? '', statusPatch(current.status, next));
      return 0;
    },
  };
}

/** The fields the daemon owns, with absent counters as 0 so `{}` and `{pulling: 0}` compare equal. */
function comparable(s: NodeImageStatus | undefined): unknown {
  return {
    desired: s?.desired ?? 0,
    succeeded: s?.succeeded ?? 0,
    failed: s?.failed ?? 0,
    pulling: s?.pulling ?? 0,
    waiting: s?.waiting ?? 0,
    imageStatuses: s?.imageStatuses ?? {},
  };
}
