/**
 * Keeps what the hub manages the way the hub said, against changes made behind its back.
 *
 * Every object the link applies is remembered with the manifest it applied and the
 * `metadata.generation` the apiserver answered. The status pass lists the managed objects of every
 * kind anyway (by the managed-by label the applier sets); handing that listing to `check` finds
 * - objects that are gone (deleted behind the hub's back), and
 * - objects whose spec changed (a different `metadata.generation`: only spec writes bump it),
 * and re-applies the remembered manifest with server-side apply (force), which restores exactly
 * the fields the hub owns and leaves fields others own alone.
 * A BroadcastJob that finished and was removed by its ttlSecondsAfterFinished is not gone in that
 * sense: while a finished run of the applied template is remembered (finished-jobs.ts), it is
 * left gone.
 * An object whose managed-by label was removed (it no longer lists either) was taken over: it is
 * released, not repaired — the link forgets it and the status pass reports it Missing — since
 * putting the label back would make taking an object over impossible (ADR 0005).
 *
 * Applies, prunes and repairs all go through one `serial` queue, so a repair can never write an
 * older manifest over a newer one the consumer is applying at the same moment; a repair also
 * re-reads the object first and does nothing if it is already as applied.
 */
import { TEMPLATE_HASH_ANNOTATION, type WorkloadKind } from '@flotilla/api';
import type { Logger } from 'pino';
import { appliedGeneration, isManaged } from './desired-decision.js';
import { errorText } from './error-text.js';
import { ranTemplate, type FinishedRun } from './finished-jobs.js';
import { removeForReplacement, type ReplaceWait } from './job-replacer.js';
import type { HubLinkMetrics } from './metrics.js';
import type { KubeApplier, KubeObject, ObjectRef } from './types.js';

/** Runs one task at a time, in call order; a failed task does not stop the next. */
export interface Serial {
  run<T>(task: () => Promise<T>): Promise<T>;
}

export function createSerial(): Serial {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    run<T>(task: () => Promise<T>): Promise<T> {
      const next = tail.then(task, task);
      tail = next.catch(() => undefined);
      return next;
    },
  };
}

interface Applied {
  ref: ObjectRef;
  manifest: KubeObject;
  /** The hub's generation of the desired message. */
  generation: number;
  /** metadata.generation the apiserver answered to our apply. */
  kubeGeneration: number | undefined;
}

export interface DriftGuard {
  /** Applies a desired manifest and remembers it. Call inside `serial`. */
  apply(ref: ObjectRef, manifest: KubeObject, generation: number): Promise<void>;
  /** Deletes the object with its pods, waits until it is gone, then applies. Call inside `serial`. */
  replace(ref: ObjectRef, manifest: KubeObject, generation: number): Promise<void>;
  /** Deletes an object the hub removed and forgets it. Call inside `serial`. */
  delete(ref: ObjectRef): Promise<void>;
  /** Stops guarding an object (the hub removed it, whether or not there was anything to delete). */
  forget(ref: ObjectRef): void;
  /** Compares a listing of one kind's managed objects with what was applied; repairs drift. */
  check(kind: WorkloadKind, listed: readonly KubeObject[]): Promise<void>;
  /** Objects the link remembers having applied. */
  size(): number;
}

export interface DriftGuardDeps {
  kube: KubeApplier;
  serial: Serial;
  logger: Logger;
  metrics: HubLinkMetrics;
  /** The remembered finished run of a BroadcastJob (finished-jobs.ts); none by default. */
  finished?: (ref: ObjectRef) => FinishedRun | undefined;
  /** How long a replacement waits for the old object to go (default job-replacer's). */
  replaceWait?: ReplaceWait;
}

const keyOf = (r: ObjectRef): string => `${r.kind}/${r.namespace}/${r.name}`;

type Drift = 'gone' | 'unmanaged' | 'spec-changed' | 'generation-changed';

/**
 * Why `current` is not what was applied, or undefined when it is. `finished`: the remembered
 * finished run of the object; a job gone after running the applied template is as applied.
 */
export function driftOf(applied: Applied, current: KubeObject | undefined, finished?: FinishedRun): Drift | undefined {
  if (!current) {
    return ranTemplate(finished, applied.manifest.metadata?.annotations?.[TEMPLATE_HASH_ANNOTATION])
      ? undefined
      : 'gone';
  }
  if (!isManaged(current)) return 'unmanaged';
  if (appliedGeneration(current) !== applied.generation) return 'generation-changed';
  if (applied.kubeGeneration !== undefined && current.metadata?.generation !== applied.kubeGeneration) {
    return 'spec-changed';
  }
  return undefined;
}

export function createDriftGuard(deps: DriftGuardDeps): DriftGuard {
  const applied = new Map<string, Applied>();

  async function applyNow(entry: Omit<Applied, 'kubeGeneration'>): Promise<void> {
    const result = await deps.kube.apply(entry.ref, entry.manifest);
    applied.set(keyOf(entry.ref), { ...entry, kubeGeneration: result.metadata?.generation });
  }

  async function repair(key: string): Promise<void> {
    const entry = applied.get(key);
    if (!entry) return;
    const drift = driftOf(entry, await deps.kube.get(entry.ref), deps.finished?.(entry.ref));
    // A newer desired message applied since the listing leaves nothing to repair.
    if (!drift) return;
    if (drift === 'unmanaged') {
      applied.delete(key);
      deps.metrics.released.inc();
      deps.logger.info(
        { ref: entry.ref },
        'managed-by label removed in the cluster: object taken over, no longer guarded',
      );
      return;
    }
    deps.logger.info({ ref: entry.ref, drift }, 'object changed behind the hub; re-applying the desired state');
    await applyNow(entry);
    deps.metrics.driftRepaired.inc({ reason: drift });
  }

  return {
    apply: (ref, manifest, generation) => applyNow({ ref, manifest, generation }),
    async replace(ref, manifest, generation) {
      // Not guarded meanwhile: the object going away is no drift to repair.
      applied.delete(keyOf(ref));
      await removeForReplacement(deps.kube, ref, deps.replaceWait);
      await applyNow({ ref, manifest, generation });
    },
    async delete(ref) {
      await deps.kube.delete(ref);
      applied.delete(keyOf(ref));
    },
    forget(ref) {
      applied.delete(keyOf(ref));
    },
    async check(kind, listed) {
      const byKey = new Map<string, KubeObject>();
      for (const obj of listed) {
        byKey.set(keyOf({ kind, namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.name ?? '' }), obj);
      }
      const drifted = [...applied.entries()]
        .filter(
          ([key, entry]) =>
            entry.ref.kind === kind && driftOf(entry, byKey.get(key), deps.finished?.(entry.ref)) !== undefined,
        )
        .map(([key]) => key);
      for (const key of drifted) {
        await deps.serial
          .run(() => repair(key))
          .catch((err: unknown) => {
            deps.metrics.applyFailures.inc();
            deps.logger.warn({ key, error: errorText(err) }, 'repairing drift failed; will retry');
          });
      }
    },
    size: () => applied.size,
  };
}
