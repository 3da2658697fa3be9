/** `flotilla workloads ...`: apply, list, get, revisions, delete, status. */
import { isDeepStrictEqual } from 'node:util';
import {
  WORKLOAD_KINDS,
  type CreateWorkloadRequest,
  type ObjectStatusRow,
  type Workload,
  type WorkloadRevision,
  type WorkloadStatus,
} from '@flotilla/api';
import { str } from '../args.js';
import { listAll, seg, type HubClient, type Query } from '../client.js';
import { confirm, print, type CliContext, type Command } from '../context.js';
import { usageError } from '../errors.js';
import { parseWorkloadDocuments, toUpdateRequest, workloadTitle } from '../manifest.js';
import { age, orDash, renderData, type Column } from '../output.js';
import { resolveWorkload } from './resolve.js';

function workloadColumns(now: Date): Column<Workload>[] {
  return [
    { header: 'kind', value: (w) => w.kind },
    { header: 'namespace', value: (w) => orDash(w.namespace) },
    { header: 'name', value: (w) => w.name },
    { header: 'revision', value: (w) => String(w.revision) },
    { header: 'stable', value: (w) => String(w.stableRevision) },
    { header: 'policy', value: (w) => w.updatePolicy },
    { header: 'updated', value: (w) => age(w.updatedAt, now) },
    { header: 'id', value: (w) => w.id },
  ];
}

function statusColumns(now: Date): Column<ObjectStatusRow>[] {
  const count = (r: ObjectStatusRow, k: 'readyReplicas' | 'updatedReplicas' | 'availableReplicas'): string =>
    r.counts ? `${r.counts[k]}/${r.counts.replicas}` : '-';
  return [
    { header: 'cluster', value: (r) => r.cluster },
    { header: 'health', value: (r) => r.health },
    { header: 'desired', value: (r) => String(r.desiredRevision) },
    { header: 'reported', value: (r) => orDash(r.reportedRevision) },
    { header: 'up-to-date', value: (r) => (r.upToDate ? 'yes' : 'no') },
    { header: 'ready', value: (r) => count(r, 'readyReplicas') },
    { header: 'updated', value: (r) => count(r, 'updatedReplicas') },
    { header: 'available', value: (r) => count(r, 'availableReplicas') },
    { header: 'age', value: (r) => age(r.reportedAt, now) },
    { header: 'message', value: (r) => r.message },
  ];
}

/** The aggregate line under `workloads status`: `3 clusters, 2 up to date (Healthy 2, Pending 1); ...`. */
export function aggregateLine(s: WorkloadStatus): string {
  const a = s.aggregate;
  const health = Object.entries(a.byHealth)
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([h, n]) => `${h} ${n}`)
    .join(', ');
  return (
    `revision ${s.revision}: ${a.clusters} cluster${a.clusters === 1 ? '' : 's'}, ${a.upToDate} up to date` +
    `${health ? ` (${health})` : ''}; replicas ${a.replicas}, ready ${a.readyReplicas}, ` +
    `updated ${a.updatedReplicas}, available ${a.availableReplicas}`
  );
}

/** Whether two versions of a workload have the same template (what an apply can change); key order aside. */
export function sameTemplate(a: Workload, b: Workload): boolean {
  const template = (w: Workload): unknown[] => [w.metadata, w.spec, w.placement, w.overrides, w.updatePolicy];
  return isDeepStrictEqual(template(a), template(b));
}

/** Creates the workload, or updates the one with its kind, namespace and name; prints what happened. */
async function applyOne(ctx: CliContext, doc: CreateWorkloadRequest): Promise<Workload> {
  const existing = (
    await listAll<Workload>(ctx.client, '/workloads', { kind: doc.kind, namespace: doc.namespace ?? '' })
  ).find((w) => w.name === doc.name);
  if (!existing) {
    const created = await ctx.client.request<Workload>('POST', '/workloads', { body: doc });
    if (ctx.format === 'table') ctx.stdout(`${workloadTitle(created)} created (revision ${created.revision})\n`);
    return created;
  }
  const updated = await ctx.client.request<Workload>('PUT', `/workloads/${seg(existing.id)}`, {
    body: toUpdateRequest(doc),
  });
  const verb = updated.revision === existing.revision && sameTemplate(existing, updated) ? 'unchanged' : 'configured';
  if (ctx.format === 'table') ctx.stdout(`${workloadTitle(updated)} ${verb} (revision ${updated.revision})\n`);
  return updated;
}

const apply: Command = {
  group: 'workloads',
  verb: 'apply',
  summary: 'Create or update workloads from a YAML or JSON file (by kind, namespace and name).',
  options: { filename: { type: 'string', short: 'f', value: 'FILE', description: 'the file; - reads stdin' } },
  async run(ctx, { options }) {
    const file = str(options, 'filename');
    if (file === undefined) throw usageError('workloads apply needs -f FILE');
    const docs = parseWorkloadDocuments(await ctx.readFile(file), file);
    const results: Workload[] = [];
    for (const doc of docs) results.push(await applyOne(ctx, doc));
    if (ctx.format !== 'table') ctx.stdout(renderData(ctx.format, results.length === 1 ? results[0] : results));
    return 0;
  },
};

const list: Command = {
  group: 'workloads',
  verb: 'list',
  summary: 'List workloads.',
  options: {
    kind: { type: 'string', value: 'KIND', description: `one of ${WORKLOAD_KINDS.join(', ')}` },
    namespace: { type: 'string', short: 'n', value: 'NS', description: 'only this namespace' },
  },
  async run(ctx, { options }) {
    const query = { kind: str(options, 'kind'), namespace: str(options, 'namespace') };
    const items = await listAll<Workload>(ctx.client, '/workloads', query);
    print(ctx, items, workloadColumns(ctx.now()), items);
    return 0;
  },
};

const get: Command = {
  group: 'workloads',
  verb: 'get',
  args: ['WORKLOAD'],
  summary: 'Show one workload (NAME, NAMESPACE/NAME, KIND/NAMESPACE/NAME or id).',
  async run(ctx, { positionals: [ref] }) {
    const w = await resolveWorkload(ctx.client, ref!);
    print(ctx, w, workloadColumns(ctx.now()), [w]);
    return 0;
  },
};

function revisionColumns(w: Workload, now: Date): Column<WorkloadRevision>[] {
  return [
    { header: 'revision', value: (r) => String(r.revision) + (r.revision === w.stableRevision ? ' (stable)' : '') },
    { header: 'hash', value: (r) => r.hash },
    { header: 'created', value: (r) => age(r.createdAt, now) },
    { header: 'by', value: (r) => r.createdBy },
  ];
}

const revisions: Command = {
  group: 'workloads',
  verb: 'revisions',
  args: ['WORKLOAD'],
  summary: "List a workload's revisions, newest first.",
  async run(ctx, { positionals: [ref] }) {
    const w = await resolveWorkload(ctx.client, ref!);
    const items = await listAll<WorkloadRevision>(ctx.client, `/workloads/${seg(w.id)}/revisions`);
    print(ctx, items, revisionColumns(w, ctx.now()), items);
    return 0;
  },
};

const remove: Command = {
  group: 'workloads',
  verb: 'delete',
  args: ['WORKLOAD'],
  summary: 'Delete a workload (its objects are removed from every cluster).',
  async run(ctx, { positionals: [ref] }) {
    const w = await resolveWorkload(ctx.client, ref!);
    await ctx.client.request('DELETE', `/workloads/${seg(w.id)}`);
    confirm(ctx, `${workloadTitle(w)} deleted`, undefined);
    return 0;
  },
};

/** Every row of a workload's status, following `continue`; the aggregate is the last page's. */
async function fetchStatus(client: HubClient, id: string, query: Query): Promise<WorkloadStatus> {
  const path = `/workloads/${seg(id)}/status`;
  let page = await client.request<WorkloadStatus>('GET', path, { query: { ...query, limit: 1000 } });
  const items = [...page.items];
  while (page.continue) {
    page = await client.request<WorkloadStatus>('GET', path, {
      query: { ...query, limit: 1000, continue: page.continue },
    });
    items.push(...page.items);
  }
  return { workloadId: page.workloadId, revision: page.revision, aggregate: page.aggregate, items };
}

const status: Command = {
  group: 'workloads',
  verb: 'status',
  args: ['WORKLOAD'],
  summary: 'Per-cluster status of a workload, and the aggregate.',
  options: {
    selector: {
      type: 'string',
      short: 'l',
      value: 'SELECTOR',
      description: 'only clusters matching this label selector',
    },
    health: { type: 'string', value: 'HEALTH', description: 'only rows of this health' },
  },
  async run(ctx, { positionals: [ref], options }) {
    const w = await resolveWorkload(ctx.client, ref!);
    const query = { labelSelector: str(options, 'selector'), health: str(options, 'health') };
    const full = await fetchStatus(ctx.client, w.id, query);
    print(ctx, full, statusColumns(ctx.now()), full.items);
    if (ctx.format === 'table') ctx.stdout(`\n${aggregateLine(full)}\n`);
    return 0;
  },
};

export const workloadCommands: readonly Command[] = [apply, list, get, revisions, remove, status];
