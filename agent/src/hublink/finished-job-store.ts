/**
 * The agent's memory of finished BroadcastJob runs (finished-jobs.ts says what is remembered and
 * why), kept in memory and written to a ConfigMap in the agent's namespace so that it outlives
 * the process. The ConfigMap is written whole with server-side apply under the agent's field
 * manager; a failed write is logged and retried on the next change or status pass, while the
 * memory goes on being used.
 */
import type { StatusMessage } from '@flotilla/api';
import type { Logger } from 'pino';
import { isKubeStatus } from '../errors.js';
import { resourcePath, Resources } from '../runtime/resource.js';
import { PatchType, type KubeRest } from '../runtime/rest.js';
import { errorText } from './error-text.js';
import {
  decodeRuns,
  encodeRuns,
  finishedReport,
  finishedRunOf,
  runChanged,
  runFor,
  runKey,
  type FinishedRun,
  type RunAbout,
} from './finished-jobs.js';
import { FIELD_MANAGER } from './kube-applier.js';
import { statusReport } from './object-status.js';
import type { KubeObject, ObjectRef } from './types.js';

/** The ConfigMap in the agent's namespace (the agent chart grants it by this name). */
export const FINISHED_JOBS_CONFIGMAP = 'flotilla-agent-finished-jobs';

/** Where the remembered runs are kept. */
export interface FinishedRunStore {
  load(): Promise<Map<string, FinishedRun>>;
  save(runs: ReadonlyMap<string, FinishedRun>): Promise<void>;
}

/** A store over the ConfigMap `namespace/name`. */
export function configMapRunStore(rest: KubeRest, namespace: string, name: string): FinishedRunStore {
  const path = resourcePath(Resources.configMaps, namespace, name);
  return {
    async load() {
      try {
        const cm = await rest.request<{ data?: Record<string, string> }>({ method: 'GET', path });
        return decodeRuns(cm.data);
      } catch (err) {
        if (isKubeStatus(err, 404)) return new Map();
        throw err;
      }
    },
    async save(runs) {
      await rest.request({
        method: 'PATCH',
        path,
        query: { fieldManager: FIELD_MANAGER, force: true },
        contentType: PatchType.apply,
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name,
            namespace,
            labels: { 'app.kubernetes.io/managed-by': 'flotilla-agent', 'app.kubernetes.io/component': 'hub-link' },
          },
          data: encodeRuns(runs),
        },
        discardBody: true,
      });
    },
  };
}

/** A store that keeps nothing beyond the process (tests and links without a namespace). */
export function memoryRunStore(): FinishedRunStore & { saved: Map<string, FinishedRun> } {
  const store = {
    saved: new Map<string, FinishedRun>(),
    load: () => Promise.resolve(new Map(store.saved)),
    save(runs: ReadonlyMap<string, FinishedRun>) {
      store.saved = new Map(runs);
      return Promise.resolve();
    },
  };
  return store;
}

export interface FinishedJobs {
  /** Reads the remembered runs (once, before desired messages are handled). */
  load(): Promise<void>;
  /** Remembers the finished runs in a listing of the managed BroadcastJobs. */
  observe(listed: readonly KubeObject[], now: Date): Promise<void>;
  get(ref: ObjectRef): FinishedRun | undefined;
  /** A desired message with the run's template arrived while the job is gone: report its generation. */
  answered(ref: ObjectRef, about: RunAbout): Promise<void>;
  /** The hub removed the object or sent a new template: the run no longer stands for it. */
  forget(ref: ObjectRef): Promise<void>;
  /** The reports of the remembered runs (status-reporter.ts sends those whose job is gone). */
  reports(now: Date): StatusMessage[];
}

export interface FinishedJobsDeps {
  cluster: string;
  store: FinishedRunStore;
  logger: Logger;
}

export function createFinishedJobs(deps: FinishedJobsDeps): FinishedJobs {
  let runs = new Map<string, FinishedRun>();
  let dirty = false;

  async function persist(): Promise<void> {
    dirty = true;
    try {
      await deps.store.save(runs);
      dirty = false;
    } catch (err) {
      deps.logger.warn({ error: errorText(err) }, 'saving the finished jobs failed; will retry');
    }
  }

  return {
    async load() {
      runs = await deps.store.load();
    },
    async observe(listed, now) {
      let changed = false;
      for (const obj of listed) {
        const ref: ObjectRef = {
          kind: 'BroadcastJob',
          namespace: obj.metadata?.namespace ?? '',
          name: obj.metadata?.name ?? '',
        };
        if (ref.name === '') continue;
        const run = finishedRunOf(ref, obj, statusReport(deps.cluster, ref, obj, now));
        if (!run || !runChanged(runs.get(runKey(ref)), run)) continue;
        runs.set(runKey(ref), run);
        changed = true;
      }
      if (changed || dirty) await persist();
    },
    get: (ref) => (ref.kind === 'BroadcastJob' ? runs.get(runKey(ref)) : undefined),
    async answered(ref, about) {
      const run = runs.get(runKey(ref));
      // An older message than the one the report speaks of changes nothing.
      if (!run || about.generation < run.report.generation) return;
      const next = runFor(run, about);
      if (!runChanged(run, next)) return;
      runs.set(runKey(ref), next);
      await persist();
    },
    async forget(ref) {
      if (ref.kind !== 'BroadcastJob' || !runs.delete(runKey(ref))) return;
      await persist();
    },
    reports: (now) => [...runs.values()].map((run) => finishedReport(run, now)),
  };
}
