/**
 * Workload lifecycle: create, update (a new immutable revision when the content changes),
 * delete (tombstones everywhere), and reading workloads and their revisions. Each change runs in
 * one transaction with its desired-state changes, outbox rows and audit entry; the outbox hands
 * the rows to the relay after commit.
 */
import type {
  CreateWorkloadRequest,
  Overrides,
  PageQuery,
  UpdateWorkloadRequest,
  Workload,
  WorkloadList,
  WorkloadListQuery,
  WorkloadMetadata,
  WorkloadRef,
  WorkloadRevision,
  WorkloadRevisionList,
} from '@flotilla/api';
import type { Principal } from '../auth/tokens.js';
import type { Db, Tx } from '../db/client.js';
import { contentHash } from '../domain/canonical-json.js';
import { checkDependencies, dependentsOf, normalizeRefs, refLabel } from '../domain/dependencies.js';
import { paginate } from '../domain/pagination.js';
import type { SpecValidator } from '../domain/spec-validator.js';
import { conflict, invalid, notFound } from '../errors.js';
import type { HubMetrics } from '../metrics.js';
import { recordAudit } from '../repositories/audit-repo.js';
import {
  dependencyGraph,
  getLiveWorkload,
  getRevision,
  insertRevision,
  insertWorkload,
  listRevisions,
  listWorkloads,
  toApiRevision,
  toApiWorkload,
  updateWorkloadHead,
  type RevisionRow,
  type WorkloadRow,
} from '../repositories/workloads-repo.js';
import { observeSync, type DesiredChanges } from './desired-sync.js';
import type { WorkloadAdmission } from './workload-admission.js';
import { asV1alpha1Body, assertPublishable, assertValidTemplate } from './workload-validation.js';

export interface WorkloadServiceDeps {
  db: Db;
  /** Desired-state changes and the transactions that make them (outbox rows reach the relay). */
  desired: DesiredChanges;
  validate: SpecValidator;
  metrics?: HubMetrics;
  /** The workload policy, checked on the content as every cluster gets it. */
  admission: WorkloadAdmission;
  /** The largest desired message that can be published (stream max_msg_size, max_payload). */
  maxDesiredMessageBytes: number;
}

interface Content {
  metadata: WorkloadMetadata;
  spec: Record<string, unknown>;
  overrides: Overrides;
}

function contentOf(body: CreateWorkloadRequest | UpdateWorkloadRequest): Content {
  return { metadata: body.metadata ?? {}, spec: body.spec, overrides: body.overrides ?? {} };
}

export interface WorkloadService {
  create(actor: Principal, body: CreateWorkloadRequest): Promise<Workload>;
  update(actor: Principal, id: string, body: UpdateWorkloadRequest): Promise<Workload>;
  remove(actor: Principal, id: string): Promise<void>;
  list(query: WorkloadListQuery): Promise<WorkloadList>;
  get(id: string): Promise<Workload>;
  revisions(id: string, query: PageQuery): Promise<WorkloadRevisionList>;
  revision(id: string, revision: number): Promise<WorkloadRevision>;
}

/** What a change stored: the workload's head and revision now, and its audit entry. */
interface WorkloadChange {
  head: WorkloadRow;
  revision: RevisionRow;
  action: string;
  details: Record<string, unknown>;
}

/**
 * One workload change in one transaction: the desired-state lock, `change` (storing the
 * workload), the sync of its desired rows and the audit entry; the sync's stages are recorded
 * once it committed.
 */
async function changeWorkload(
  deps: WorkloadServiceDeps,
  actor: Principal,
  change: (tx: Tx) => Promise<WorkloadChange>,
): Promise<WorkloadChange> {
  const { done, sync } = await deps.desired.transaction(async (tx) => {
    await deps.desired.lock(tx);
    const done = await change(tx);
    const sync = await deps.desired.syncWorkload(tx, done.head, done.revision);
    await recordAudit(tx, {
      actor: actor.name,
      action: done.action,
      targetType: 'workload',
      targetId: done.head.id,
      details: { ...done.details, clustersChanged: sync.changed },
    });
    return { done, sync };
  });
  observeSync(deps.metrics, sync);
  return done;
}

/**
 * The workload's dependencies with namespaces filled in, checked against the live workloads in
 * the transaction (which holds the desired-state lock, so no concurrent write can close a cycle).
 */
async function dependenciesOf(
  tx: Tx,
  self: { kind: WorkloadRow['kind']; namespace: string; name: string },
  body: CreateWorkloadRequest | UpdateWorkloadRequest,
): Promise<Required<WorkloadRef>[]> {
  const refs = normalizeRefs(body.dependsOn, self.namespace);
  if (refs.length === 0) return refs;
  const problem = checkDependencies(self, refs, await dependencyGraph(tx));
  if (problem)
    throw invalid(`${problem.field}: ${problem.message}`, [{ path: problem.field, message: problem.message }]);
  return refs;
}

async function create(deps: WorkloadServiceDeps, actor: Principal, input: CreateWorkloadRequest): Promise<Workload> {
  const body = asV1alpha1Body(input.kind, input);
  const target = { kind: body.kind, name: body.name, namespace: body.namespace ?? '' };
  assertValidTemplate(deps.validate, target, body);
  const content = contentOf(body);
  assertPublishable(target, content, deps.maxDesiredMessageBytes, deps.metrics);
  const { head, revision } = await changeWorkload(deps, actor, async (tx) => {
    await deps.admission.check(tx, target, content);
    const dependsOn = await dependenciesOf(tx, target, body);
    const w = await insertWorkload(tx, {
      ...target,
      placement: body.placement,
      updatePolicy: body.updatePolicy ?? 'Immediate',
      dependsOn,
    });
    const r = await insertRevision(tx, {
      workloadId: w.id,
      revision: 1,
      hash: contentHash(content),
      ...content,
      createdBy: actor.name,
    });
    return {
      head: w,
      revision: r,
      action: 'workload.create',
      details: { kind: w.kind, namespace: w.namespace, name: w.name, revision: 1 },
    };
  });
  return toApiWorkload(head, revision);
}

/**
 * 'Rollout' workloads keep clusters on the stable revision; switching to it keeps them where they
 * are (the revision they had before this update).
 */
function stableRevisionAfter(w: WorkloadRow, updatePolicy: WorkloadRow['updatePolicy'], revision: number): number {
  if (updatePolicy === 'Immediate') return revision;
  return w.updatePolicy === 'Rollout' ? w.stableRevision : w.currentRevision;
}

async function update(
  deps: WorkloadServiceDeps,
  actor: Principal,
  id: string,
  body: UpdateWorkloadRequest,
): Promise<Workload> {
  const { head, revision } = await changeWorkload(deps, actor, async (tx) => {
    const w = await getLiveWorkload(tx, id, true);
    if (!w) throw notFound(`workload ${id}`);
    body = asV1alpha1Body(w.kind, body);
    assertValidTemplate(deps.validate, w, body);
    const current = await getRevision(tx, w.id, w.currentRevision);
    const content = contentOf(body);
    assertPublishable(w, content, deps.maxDesiredMessageBytes, deps.metrics);
    await deps.admission.check(tx, w, content);
    const hash = contentHash(content);
    // A new revision only when what clusters receive changes; placement is not part of it.
    const revision =
      current && current.hash === hash
        ? current
        : await insertRevision(tx, {
            workloadId: w.id,
            revision: w.currentRevision + 1,
            hash,
            ...content,
            createdBy: actor.name,
          });
    const updatePolicy = body.updatePolicy ?? w.updatePolicy;
    const dependsOn = await dependenciesOf(tx, w, body);
    const head = await updateWorkloadHead(tx, w.id, {
      placement: body.placement,
      dependsOn,
      currentRevision: revision.revision,
      updatePolicy,
      stableRevision: stableRevisionAfter(w, updatePolicy, revision.revision),
    });
    return {
      head,
      revision,
      action: 'workload.update',
      details: { revision: revision.revision, newRevision: revision !== current },
    };
  });
  return toApiWorkload(head, revision);
}

async function remove(deps: WorkloadServiceDeps, actor: Principal, id: string): Promise<void> {
  await changeWorkload(deps, actor, async (tx) => {
    const w = await getLiveWorkload(tx, id, true);
    if (!w) throw notFound(`workload ${id}`);
    const dependents = dependentsOf(w, await dependencyGraph(tx));
    if (dependents.length > 0) {
      const names = dependents.map((d) => refLabel(d)).join(', ');
      throw conflict(`${refLabel(w)} cannot be deleted: ${names} depend on it (change their dependsOn first)`);
    }
    const revision = await getRevision(tx, w.id, w.currentRevision);
    const head = await updateWorkloadHead(tx, w.id, { deletedAt: new Date() });
    return {
      head,
      revision: revision!,
      action: 'workload.delete',
      details: { kind: w.kind, namespace: w.namespace, name: w.name },
    };
  });
}

async function liveWorkload(db: Db, id: string): Promise<WorkloadRow> {
  const w = await getLiveWorkload(db, id);
  if (!w) throw notFound(`workload ${id}`);
  return w;
}

export function createWorkloadService(deps: WorkloadServiceDeps): WorkloadService {
  const { db } = deps;
  return {
    create: (actor, body) => create(deps, actor, body),
    update: (actor, id, body) => update(deps, actor, id, body),
    remove: (actor, id) => remove(deps, actor, id),
    list: (q) =>
      paginate(
        q,
        ['string', 'string', 'string'],
        (after, limit) =>
          listWorkloads(db, {
            ...(q.kind ? { kind: q.kind } : {}),
            ...(q.namespace !== undefined ? { namespace: q.namespace } : {}),
            ...(after ? { after } : {}),
            limit,
          }),
        (r) => [r.workload.kind, r.workload.namespace, r.workload.name],
        (r) => toApiWorkload(r.workload, r.revision),
      ),
    async get(id) {
      const w = await getLiveWorkload(db, id);
      const r = w && (await getRevision(db, w.id, w.currentRevision));
      if (!w || !r) throw notFound(`workload ${id}`);
      return toApiWorkload(w, r);
    },
    async revisions(id, q) {
      const w = await liveWorkload(db, id);
      return paginate(
        q,
        ['int32'],
        (before, limit) => listRevisions(db, w.id, limit, before?.[0]),
        (r) => [r.revision],
        toApiRevision,
      );
    },
    async revision(id, revision) {
      const r = await getRevision(db, id, revision);
      if (!r) throw notFound(`revision ${revision} of workload ${id}`);
      return toApiRevision(r);
    },
  };
}
