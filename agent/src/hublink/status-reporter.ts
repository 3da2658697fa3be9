/**
 * Reports the status of every managed object to the hub. Each pass lists the managed objects of
 * every kind, computes their reports and publishes only those that changed since the last
 * publish (or were last sent longer ago than the resync period) — that is the debounce: a
 * burst of changes between two passes becomes one report. Objects that vanished are reported
 * as Missing; pruned ones as Deleted (by the desired handler, through `reportGone`).
 */
import { WORKLOAD_KINDS, encodeMessage, statusSubject, type StatusMessage, type WorkloadKind } from '@flotilla/api';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import type { HubLinkMetrics } from './metrics.js';
import { goneReport, lastReported, reportDigest, statusReport, type GoneAbout } from './object-status.js';
import { errorText } from './error-text.js';
import type { KubeApplier, KubeObject, ObjectRef } from './types.js';

interface Sent {
  digest: string;
  at: number;
  last: StatusMessage;
}

export interface StatusReporterDeps {
  cluster: string;
  kube: KubeApplier;
  logger: Logger;
  metrics: HubLinkMetrics;
  js: () => JetStreamClient | undefined;
  intervalMs: number;
  resyncMs: number;
  now?: () => Date;
  /**
   * Reports of objects that are gone from the cluster yet stand as they last were (finished
   * BroadcastJobs that removed themselves, finished-jobs.ts); sent when not listed.
   */
  standing?: (now: Date) => readonly StatusMessage[];
  /** Sees each pass's listing of a kind's managed objects (drift repair). */
  onListed?: (kind: WorkloadKind, objects: readonly KubeObject[]) => Promise<void>;
}

export interface StatusReporter {
  start(): void;
  /** Run a pass soon (after an apply). */
  kick(): void;
  /** `about`: the desired message that removed it, so the report sorts after earlier ones. */
  /** `message`: why it is gone, when the default ("deleted as the hub asked", "missing") says too little. */
  reportGone(ref: ObjectRef, health: 'Deleted' | 'Missing', about?: GoneAbout, message?: string): Promise<void>;
  managedCount(): number;
  stop(): Promise<void>;
}

const keyOf = (r: ObjectRef): string => `${r.kind}/${r.namespace}/${r.name}`;

export function createStatusReporter(deps: StatusReporterDeps): StatusReporter {
  const now = deps.now ?? ((): Date => new Date());
  const sent = new Map<string, Sent>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  let running: Promise<void> = Promise.resolve();
  let managed = 0;

  async function publish(m: StatusMessage): Promise<void> {
    const js = deps.js();
    if (!js) throw new Error('not connected to NATS');
    await js.publish(statusSubject(deps.cluster, m), encodeMessage(m));
    deps.metrics.statusPublished.inc();
    sent.set(keyOf(m), { digest: reportDigest(m), at: Date.now(), last: m });
  }

  async function pass(): Promise<void> {
    const seen = new Set<string>();
    for (const kind of WORKLOAD_KINDS) {
      const listed = await deps.kube.listManaged(kind);
      // Before publishing: drift is repaired even while NATS is unreachable.
      await deps.onListed?.(kind, listed);
      for (const obj of listed) await reportObject(kind, obj, seen);
    }
    managed = seen.size;
    for (const report of deps.standing?.(now()) ?? []) {
      const key = keyOf(report);
      if (seen.has(key)) continue;
      seen.add(key);
      await publishChanged(key, report);
    }
    await reportMissing(seen);
  }

  /** Publishes the object's report when it changed or the resync period passed; adds its key to `seen`. */
  async function reportObject(kind: WorkloadKind, obj: KubeObject, seen: Set<string>): Promise<void> {
    const ref: ObjectRef = { kind, namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.name ?? '' };
    if (ref.name === '') return;
    const key = keyOf(ref);
    seen.add(key);
    await publishChanged(key, statusReport(deps.cluster, ref, obj, now()));
  }

  /** Publishes a report when it changed or the resync period passed. */
  async function publishChanged(key: string, report: StatusMessage): Promise<void> {
    const prev = sent.get(key);
    if (prev && prev.digest === reportDigest(report) && Date.now() - prev.at < deps.resyncMs) return;
    await publish(report);
  }

  /** Reports as Missing the objects reported before and not `seen` in this pass (once). */
  async function reportMissing(seen: ReadonlySet<string>): Promise<void> {
    for (const [key, s] of sent) {
      if (seen.has(key) || s.last.health === 'Deleted' || s.last.health === 'Missing') continue;
      await publish(goneReport(deps.cluster, s.last, { last: s.last, health: 'Missing' }, now()));
    }
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = undefined;
      running = pass()
        .catch((err: unknown) => deps.logger.warn({ error: errorText(err) }, 'status pass failed; retrying'))
        .finally(() => {
          if (!timer) schedule(deps.intervalMs);
        });
    }, delayMs);
  }

  return {
    start() {
      stopped = false;
      schedule(0);
    },
    kick() {
      if (stopped || !timer) return;
      clearTimeout(timer);
      schedule(50);
    },
    async reportGone(ref, health, about, message) {
      const last = lastReported(about, sent.get(keyOf(ref))?.last);
      await publish(goneReport(deps.cluster, ref, { last, health, message }, now()));
    },
    managedCount: () => managed,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
