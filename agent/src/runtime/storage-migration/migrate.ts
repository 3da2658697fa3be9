/**
 * Storage-version migration of the Kruise CRDs, run by the `storagemigration` component on the
 * leader: for each CRD whose `status.storedVersions` lists more than its storage version, every
 * object is rewritten at the storage version (an empty merge patch: the apiserver re-encodes the
 * object, and writes it since the stored bytes differ), then storedVersions is cut to the storage
 * version with a JSON patch guarded by a `test` of the list it read. Safe to repeat: a pass over a
 * migrated CRD only reads it; a pass that could not rewrite every object leaves storedVersions
 * alone and the next pass tries again. Each migration of a kind leaves an event on its CRD, a log
 * line and counts on `flotilla_storage_migration_objects_total`.
 */
import { type CrdDefinition, storageVersionOf } from '@flotilla/api';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { isKubeStatus } from '../../errors.js';
import type { EventRecorder } from '../events.js';
import type { KubeObject } from '../kube-object.js';
import { PatchType, type KubeRest } from '../rest.js';
import { resourcePath, type ResourceRef, Resources } from '../resource.js';
import { describeOutcome, type KindOutcome, planMigration, trimPatch } from './plan.js';

export interface MigrationMetrics {
  objects(crd: string, result: 'migrated' | 'gone' | 'failed', n: number): void;
  /** Versions listed in storedVersions besides the storage version. */
  pending(crd: string, n: number): void;
}

export function promMigrationMetrics(registry: Registry): MigrationMetrics {
  const objects = new Counter({
    name: 'flotilla_storage_migration_objects_total',
    help: 'Objects the storage-version migration rewrote (migrated), found deleted (gone) or could not rewrite (failed)',
    labelNames: ['crd', 'result'],
    registers: [registry],
  });
  const pending = new Gauge({
    name: 'flotilla_storage_migration_pending_versions',
    help: 'API versions a CRD still lists in status.storedVersions besides its storage version',
    labelNames: ['crd'],
    registers: [registry],
  });
  return {
    objects: (crd, result, n) => objects.inc({ crd, result }, n),
    pending: (crd, n) => pending.set({ crd }, n),
  };
}

export interface MigrationDeps {
  rest: KubeRest;
  events: Pick<EventRecorder, 'event'>;
  logger: Logger;
  metrics: MigrationMetrics;
  definitions: readonly CrdDefinition[];
  /** Objects per list page. */
  pageSize?: number;
}

interface InstalledCrd extends KubeObject {
  status?: { storedVersions?: string[] };
}

interface ObjectList {
  items: KubeObject[];
  metadata?: { continue?: string };
}

const crdName = (d: CrdDefinition): string => `${d.plural}.${d.group}`;

/** Rewrites one object at the storage version; deleted ones count as gone. */
async function rewrite(rest: KubeRest, ref: ResourceRef, obj: KubeObject): Promise<'migrated' | 'gone'> {
  try {
    await rest.request({
      method: 'PATCH',
      path: resourcePath(ref, obj.metadata?.namespace, obj.metadata?.name),
      body: {},
      contentType: PatchType.merge,
    });
    return 'migrated';
  } catch (err) {
    if (isKubeStatus(err, 404)) return 'gone';
    throw err;
  }
}

/** Rewrites every object of `ref`, page by page. */
async function rewriteAll(deps: MigrationDeps, ref: ResourceRef, crd: string): Promise<KindOutcome> {
  const outcome: KindOutcome = { crd, migrated: 0, gone: 0, failed: 0 };
  let token: string | undefined;
  do {
    const page = await deps.rest.request<ObjectList>({
      method: 'GET',
      path: resourcePath(ref),
      query: { limit: deps.pageSize ?? 500, ...(token ? { continue: token } : {}) },
    });
    for (const obj of page.items) {
      try {
        outcome[await rewrite(deps.rest, ref, obj)]++;
      } catch (err) {
        outcome.failed++;
        outcome.firstError ??= `${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name}: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    token = page.metadata?.continue || undefined;
  } while (token);
  return outcome;
}

/**
 * One CRD: read, migrate if needed, trim; never throws (failures are reported and retried).
 * Resolves true when the CRD lists only its storage version afterwards.
 */
export async function migrateKind(deps: MigrationDeps, definition: CrdDefinition): Promise<boolean> {
  const crd = crdName(definition);
  const crdPath = resourcePath(Resources.customResourceDefinitions, undefined, crd);
  const storage = storageVersionOf(definition);
  let installed: InstalledCrd;
  try {
    installed = await deps.rest.request<InstalledCrd>({ method: 'GET', path: crdPath });
  } catch (err) {
    deps.logger.warn({ err, crd }, 'storage migration: cannot read the CRD');
    return false;
  }
  const step = planMigration({ crd, storage, storedVersions: installed.status?.storedVersions ?? [storage] });
  deps.metrics.pending(crd, step.action === 'migrate' ? step.from.length - 1 : 0);
  if (step.action === 'none') {
    deps.logger.debug({ crd, storage }, 'storage migration: nothing to do');
    return true;
  }
  const ref: ResourceRef = {
    group: definition.group,
    version: storage,
    plural: definition.plural,
    kind: definition.kind,
    namespaced: definition.scope === 'Namespaced',
  };
  let outcome: KindOutcome;
  try {
    outcome = await rewriteAll(deps, ref, crd);
  } catch (err) {
    outcome = {
      crd,
      migrated: 0,
      gone: 0,
      failed: 1,
      firstError: `listing: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  for (const result of ['migrated', 'gone', 'failed'] as const) deps.metrics.objects(crd, result, outcome[result]);
  if (outcome.failed === 0) {
    try {
      await deps.rest.request({
        method: 'PATCH',
        path: `${crdPath}/status`,
        body: trimPatch(step),
        contentType: PatchType.json,
      });
      deps.metrics.pending(crd, 0);
    } catch (err) {
      outcome.failed = 1;
      outcome.firstError = `trimming storedVersions: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  const { type, reason, message } = describeOutcome(step, outcome);
  deps.events.event(installed, type, reason, message);
  const log = { crd, storage, from: step.from, migrated: outcome.migrated, gone: outcome.gone, failed: outcome.failed };
  if (type === 'Normal') deps.logger.info(log, `storage migration of ${crd}: ${message}`);
  else deps.logger.warn(log, `storage migration of ${crd}: ${message}`);
  return type === 'Normal';
}

/** One pass over every CRD; true when every one is migrated. */
export async function migrateStorage(deps: MigrationDeps): Promise<boolean> {
  let done = true;
  for (const definition of deps.definitions) {
    if (!(await migrateKind(deps, definition))) done = false;
  }
  return done;
}
