/** `flotilla rollouts ...`: start, list, get, watch, the controls, and rollback. */
import type { Rollout, RolloutPreview } from '@flotilla/api';
import { intFlag, str, type OptionSpec, type OptionValues } from '../args.js';
import { listAll, seg } from '../client.js';
import { confirm, print, type CliContext, type Command } from '../context.js';
import { usageError } from '../errors.js';
import { renderData } from '../output.js';
import { canaryStrategy, parseStrategyFile } from '../strategy.js';
import { resolveWorkload } from './resolve.js';
import { renderPreview } from './rollout-preview.js';
import { renderRollout, rolloutColumns } from './rollout-view.js';
import { watchRollout } from './rollout-watch.js';

const WATCH: OptionSpec = {
  type: 'boolean',
  description: 'then follow its events until it ends (exit 0 only if it Succeeded)',
};

/** The strategy from exactly one of `--strategy FILE` or `--canary CLUSTERS` (with its flags). */
async function strategyFrom(ctx: CliContext, options: OptionValues): Promise<Record<string, unknown>> {
  const file = str(options, 'strategy');
  const canary = str(options, 'canary');
  if ((file === undefined) === (canary === undefined))
    throw usageError('give exactly one of --strategy FILE or --canary CLUSTERS');
  if (file !== undefined) return parseStrategyFile(await ctx.readFile(file), file);
  return canaryStrategy({
    canary: canary!,
    soakSeconds: intFlag(options, 'soak'),
    maxConcurrency: intFlag(options, 'max-concurrency'),
    approval: str(options, 'approval'),
    progressDeadlineSeconds: intFlag(options, 'deadline'),
  });
}

const start: Command = {
  group: 'rollouts',
  verb: 'start',
  args: ['WORKLOAD'],
  summary: 'Start a rollout of the workload to its latest (or --revision) revision.',
  options: {
    strategy: { type: 'string', value: 'FILE', description: 'the RolloutStrategy as YAML or JSON' },
    canary: {
      type: 'string',
      value: 'CLUSTERS',
      description: 'instead of --strategy: canary wave of these clusters (a,b) or labels (k=v), then the rest',
    },
    soak: { type: 'string', value: 'SECONDS', description: 'with --canary: soak time per cluster' },
    'max-concurrency': { type: 'string', value: 'N', description: 'with --canary: clusters at once in the main wave' },
    approval: {
      type: 'string',
      value: 'GATE',
      description: 'with --canary: None, Before, After or BeforeAndAfter (main wave)',
    },
    deadline: { type: 'string', value: 'SECONDS', description: 'with --canary: progress deadline per cluster' },
    revision: { type: 'string', value: 'N', description: 'target revision (default: the latest)' },
    watch: WATCH,
    'dry-run': {
      type: 'boolean',
      description: 'show the plan a start would freeze (clusters in or out and why, manifest diffs, expected starts)',
    },
  },
  async run(ctx, { positionals: [ref], options }) {
    const strategy = await strategyFrom(ctx, options);
    const revision = intFlag(options, 'revision');
    const w = await resolveWorkload(ctx.client, ref!);
    const body = { strategy, ...(revision !== undefined ? { revision } : {}) };
    if (options['dry-run'] === true) {
      const p = await ctx.client.request<RolloutPreview>('POST', `/workloads/${seg(w.id)}/rollouts`, {
        body: { ...body, dryRun: true },
      });
      ctx.stdout(ctx.format === 'table' ? renderPreview(p) : renderData(ctx.format, p));
      return 0;
    }
    const r = await ctx.client.request<Rollout>('POST', `/workloads/${seg(w.id)}/rollouts`, { body });
    confirm(ctx, `rollout ${r.id} started: revision ${r.previousRevision} -> ${r.targetRevision}, phase ${r.phase}`, r);
    return options['watch'] === true ? watchRollout(ctx, r.id) : 0;
  },
};

const list: Command = {
  group: 'rollouts',
  verb: 'list',
  args: ['WORKLOAD'],
  summary: "List a workload's rollouts, newest first.",
  async run(ctx, { positionals: [ref] }) {
    const w = await resolveWorkload(ctx.client, ref!);
    const items = await listAll<Rollout>(ctx.client, `/workloads/${seg(w.id)}/rollouts`);
    print(ctx, items, rolloutColumns(ctx.now()), items);
    return 0;
  },
};

const get: Command = {
  group: 'rollouts',
  verb: 'get',
  args: ['ID'],
  summary: 'Show a rollout: phase, waves and clusters.',
  async run(ctx, { positionals: [id] }) {
    const r = await ctx.client.request<Rollout>('GET', `/rollouts/${seg(id!)}`);
    ctx.stdout(ctx.format === 'table' ? renderRollout(r, ctx.now()) : renderData(ctx.format, r));
    return 0;
  },
};

const watch: Command = {
  group: 'rollouts',
  verb: 'watch',
  args: ['ID'],
  summary: 'Follow the rollout events until it ends; exit 0 only if it Succeeded.',
  run: (ctx, { positionals: [id] }) => watchRollout(ctx, id!),
};

/** `rollouts pause|resume|approve|abort|retry ID [--reason TEXT]` (approve: `--wave`). */
function control(verb: 'pause' | 'resume' | 'approve' | 'abort' | 'retry', summary: string): Command {
  return {
    group: 'rollouts',
    verb,
    args: ['ID'],
    summary,
    options: {
      reason: { type: 'string', value: 'TEXT', description: 'why (recorded in the audit log)' },
      ...(verb === 'approve'
        ? { wave: { type: 'string' as const, value: 'WAVE', description: 'the wave expected to wait for approval' } }
        : {}),
    },
    async run(ctx, { positionals: [id], options }) {
      const reason = str(options, 'reason');
      const wave = str(options, 'wave');
      const r = await ctx.client.request<Rollout>('POST', `/rollouts/${seg(id!)}/${verb}`, {
        body: { ...(reason !== undefined ? { reason } : {}), ...(wave !== undefined ? { wave } : {}) },
      });
      confirm(ctx, `rollout ${r.id} ${verb}: phase ${r.phase}`, r);
      return 0;
    },
  };
}

const rollback: Command = {
  group: 'rollouts',
  verb: 'rollback',
  args: ['ID'],
  summary: "Roll back: a new rollout to this rollout's previous revision (staged if its strategy says so).",
  options: {
    watch: WATCH,
    'dry-run': { type: 'boolean', description: 'show the plan the rollback would follow; start nothing' },
  },
  async run(ctx, { positionals: [id], options }) {
    if (options['dry-run'] === true) {
      const p = await ctx.client.request<RolloutPreview>('POST', `/rollouts/${seg(id!)}/rollback`, {
        body: { dryRun: true },
      });
      ctx.stdout(ctx.format === 'table' ? renderPreview(p) : renderData(ctx.format, p));
      return 0;
    }
    const r = await ctx.client.request<Rollout>('POST', `/rollouts/${seg(id!)}/rollback`);
    confirm(ctx, `rollout ${r.id} started: rollback to revision ${r.targetRevision}`, r);
    return options['watch'] === true ? watchRollout(ctx, r.id) : 0;
  },
};

export const rolloutCommands: readonly Command[] = [
  start,
  list,
  get,
  watch,
  control('pause', 'Pause a rollout (clusters in progress finish; no new ones start).'),
  control('resume', 'Resume a paused rollout.'),
  control('approve', 'Approve the wave waiting for approval.'),
  control('abort', 'Abort a rollout (clusters stay where they are).'),
  control('retry', 'Retry the failed clusters of a rollout.'),
  rollback,
];
