/**
 * Workload lifecycle: create, update (a new immutable revision when the content changes),
 * delete (tombstones everywhere). Each runs in one outbox transaction with its desired-state
 * changes, outbox rows and audit entry; the outbox hands the rows to the relay after commit.
 */
import type {
  CreateWorkloadRequest,
  UpdateWorkloadRequest,
  Workload,
  WorkloadMetadata,
  Overrides,
} from '@flotilla/api';
import { contentHash } from '../domain/canonical-json.js';
import type { SpecValidator } from '../domain/spec-validator.js';
import { notFound } from '../errors.js';
import type { Principal } from '../repositories/tokens-repo.js';
import { recordAudit } from '../repositories/audit-repo.js';
import {
  getLiveWorkload,
  getRevision,
  insertRevision,
  insertWorkload,
  toApiWorkload,
  updateWorkloadHead,
} from '../repositories/workloads-repo.js';
import type { HubMetrics } from '../metrics.js';
import { observeSync, type DesiredChanges, type DesiredSync } from './desired-sync.js';
import type { WorkloadAdmission } from './workload-admission.js';
import { assertPublishable, assertValidTemplate } from './workload-validation.js';

export interface WorkloadServiceDeps {
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
}

export function createWorkloadService(deps: WorkloadServiceDeps): WorkloadService {
  const { desired, validate } = deps;
  /** Records the sync's stages once the transaction committed. */
  const committed = <T>(out: { value: T; sync: DesiredSync }): T => {
    observeSync(deps.metrics, out.sync);
    return out.value;
  };
  return {
    async create(actor, body) {
      const target = { kind: body.kind, name: body.name, namespace: body.namespace ?? '' };
      assertValidTemplate(validate, target, body);
      const content = contentOf(body);
      assertPublishable(target, content, deps.maxDesiredMessageBytes, deps.metrics);
      const out = await desired.transaction(async (tx) => {
        await desired.lock(tx);
        await deps.admission.check(tx, target, content);
        const w = await insertWorkload(tx, {
          ...target,
          placement: body.placement,
          updatePolicy: body.updatePolicy ?? 'Immediate',
        });
        const r = await insertRevision(tx, {
          workloadId: w.id,
          revision: 1,
          hash: contentHash(content),
          ...content,
          createdBy: actor.name,
        });
        const sync = await desired.syncWorkload(tx, w, r);
        await recordAudit(tx, {
          actor: actor.name,
          action: 'workload.create',
          targetType: 'workload',
          targetId: w.id,
          details: { kind: w.kind, namespace: w.namespace, name: w.name, revision: 1, clustersChanged: sync.changed },
        });
        return { value: toApiWorkload(w, r), sync };
      });
      return committed(out);
    },

    async update(actor, id, body) {
      const out = await desired.transaction(async (tx) => {
        await desired.lock(tx);
        const w = await getLiveWorkload(tx, id, true);
        if (!w) throw notFound(`workload ${id}`);
        assertValidTemplate(validate, w, body);
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
        // 'Rollout' workloads keep clusters on the stable revision; switching to it keeps them
        // where they are (the revision they had before this update).
        const updatePolicy = body.updatePolicy ?? w.updatePolicy;
        const stableRevision =
          updatePolicy === 'Immediate'
            ? revision.revision
            : w.updatePolicy === 'Rollout'
              ? w.stableRevision
              : w.currentRevision;
        const head = await updateWorkloadHead(tx, w.id, {
          placement: body.placement,
          currentRevision: revision.revision,
          updatePolicy,
          stableRevision,
        });
        const sync = await desired.syncWorkload(tx, head, revision);
        await recordAudit(tx, {
          actor: actor.name,
          action: 'workload.update',
          targetType: 'workload',
          targetId: w.id,
          details: { revision: revision.revision, newRevision: revision !== current, clustersChanged: sync.changed },
        });
        return { value: toApiWorkload(head, revision), sync };
      });
      return committed(out);
    },

    async remove(actor, id) {
      const out = await desired.transaction(async (tx) => {
        await desired.lock(tx);
        const w = await getLiveWorkload(tx, id, true);
        if (!w) throw notFound(`workload ${id}`);
        const revision = await getRevision(tx, w.id, w.currentRevision);
        const head = await updateWorkloadHead(tx, w.id, { deletedAt: new Date() });
        const sync = await desired.syncWorkload(tx, head, revision!);
        await recordAudit(tx, {
          actor: actor.name,
          action: 'workload.delete',
          targetType: 'workload',
          targetId: w.id,
          details: { kind: w.kind, namespace: w.namespace, name: w.name, clustersChanged: sync.changed },
        });
        return { value: undefined, sync };
      });
      committed(out);
    },
  };
}
