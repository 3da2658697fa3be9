/** `flotilla rollouts ...`: start, list, get, watch, and the controls. */
import type { Rollout, RolloutEvent } from '@flotilla/api';
import { parse as parseYaml } from 'yaml';
import { TERMINAL_ROLLOUT_PHASES } from '@flotilla/api/enums';
import { intFlag, str } from '../args.js';
import { listAll, seg } from '../client.js';
import { confirm, print, type CliContext, type Command } from '../context.js';
import { CliError, usageError } from '../errors.js';
import { age, cell, orDash, renderData, renderTable } from '../output.js';
import { readSse } from '../sse.js';
import { canaryStrategy } from '../strategy.js';
import { resolveWorkload } from './resolve.js';

const RECONNECT_MS = 1000;

export const isTerminal = (phase: string): boolean => (TERMINAL_ROLLOUT_PHASES as readonly string[]).includes(phase);

/** `rollouts get` in table mode: a summary, then one table of waves and one of clusters. */
export function renderRollout(r: Rollout, now: Date): string {
  const head = [
    `rollout ${r.id}`,
    `workload ${r.workloadId}, revision ${r.previousRevision} -> ${r.targetRevision}` +
      (r.rollbackOf ? ` (rollback of ${r.rollbackOf})` : ''),
    `phase ${r.phase}${r.currentWave ? `, wave ${r.currentWave}` : ''}; created ${age(r.createdAt, now)} ago by ${r.createdBy}`,
    ...(r.message ? [`message: ${cell(r.message)}`] : []),
    '',
  ].join('\n');
  const waves = renderTable(
    [
      { header: 'wave', value: (w: Rollout['waves'][number]) => w.name },
      { header: 'phase', value: (w) => w.phase },
      { header: 'clusters', value: (w) => w.members.join(',') || '-' },
      { header: 'concurrency', value: (w) => String(w.maxConcurrency) },
      { header: 'soak', value: (w) => `${w.soakSeconds}s` },
      { header: 'approval', value: (w) => w.approval },
      { header: 'message', value: (w) => w.message },
    ],
    r.waves,
  );
  const clusters = renderTable(
    [
      { header: 'cluster', value: (c: Rollout['clusters'][number]) => c.name },
      { header: 'wave', value: (c) => c.wave },
      { header: 'phase', value: (c) => c.phase },
      { header: 'step', value: (c) => String(c.step) },
      { header: 'started', value: (c) => (c.startedAt ? age(c.startedAt, now) : '-') },
      { header: 'message', value: (c) => orDash(c.message) },
    ],
    r.clusters,
  );
  return `${head}\n${waves}\n${clusters}`;
}

/** One line per event: `2026-01-02T03:04:05.000Z  info   canary/c1  Progressing  message`. */
export function eventLine(e: RolloutEvent): string {
  const where = [e.wave, e.cluster].filter((x) => x).join('/') || '-';
  return `${e.at}  ${e.level.padEnd(5)}  ${cell(where)}  ${e.phase}  ${cell(e.message)}\n`;
}

async function readEvents(
  ctx: CliContext,
  id: string,
  lastEventId: string,
  onEvent: (e: RolloutEvent, sseId: string) => void,
): Promise<void> {
  const res = await ctx.client.stream(`/rollouts/${seg(id)}/events`, { lastEventId });
  if (!res.body) return;
  for await (const ev of readSse(res.body)) {
    if (ev.event !== 'rollout') continue;
    onEvent(JSON.parse(ev.data) as RolloutEvent, ev.id);
  }
}

/**
 * Follows the event stream until the rollout reaches a terminal phase, reconnecting (from the
 * last event id) when the stream ends early. 0 when it Succeeded, 1 otherwise.
 */
async function watch(ctx: CliContext, id: string, sleep: (ms: number) => Promise<void>): Promise<number> {
  let last = '';
  for (;;) {
    await readEvents(ctx, id, last, (e, sseId) => {
      last = sseId;
      ctx.stdout(
        ctx.format === 'table'
          ? eventLine(e)
          : ctx.format === 'json'
            ? `${JSON.stringify(e)}\n`
            : `---\n${renderData('yaml', e)}`,
      );
    });
    const r = await ctx.client.request<Rollout>('GET', `/rollouts/${seg(id)}`);
    if (isTerminal(r.phase)) {
      ctx.stderr(`rollout ${r.id} ${r.phase}${r.message ? `: ${r.message}` : ''}\n`);
      return r.phase === 'Succeeded' ? 0 : 1;
    }
    await sleep(RECONNECT_MS);
  }
}

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

export function rolloutCommands(sleep: (ms: number) => Promise<void>): Command[] {
  return [
    {
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
        'max-concurrency': {
          type: 'string',
          value: 'N',
          description: 'with --canary: clusters at once in the main wave',
        },
        approval: {
          type: 'string',
          value: 'GATE',
          description: 'with --canary: None, Before, After or BeforeAndAfter (main wave)',
        },
        deadline: { type: 'string', value: 'SECONDS', description: 'with --canary: progress deadline per cluster' },
        revision: { type: 'string', value: 'N', description: 'target revision (default: the latest)' },
        watch: { type: 'boolean', description: 'then follow its events until it ends (exit 0 only if it Succeeded)' },
      },
      async run(ctx, { positionals: [ref], options }) {
        const file = str(options, 'strategy');
        const canary = str(options, 'canary');
        if ((file === undefined) === (canary === undefined))
          throw usageError('give exactly one of --strategy FILE or --canary CLUSTERS');
        const strategy =
          file !== undefined
            ? await readStrategy(ctx, file)
            : canaryStrategy({
                canary: canary!,
                soakSeconds: intFlag(options, 'soak'),
                maxConcurrency: intFlag(options, 'max-concurrency'),
                approval: str(options, 'approval'),
                progressDeadlineSeconds: intFlag(options, 'deadline'),
              });
        const revision = intFlag(options, 'revision');
        const w = await resolveWorkload(ctx.client, ref!);
        const r = await ctx.client.request<Rollout>('POST', `/workloads/${seg(w.id)}/rollouts`, {
          body: { strategy, ...(revision !== undefined ? { revision } : {}) },
        });
        confirm(
          ctx,
          `rollout ${r.id} started: revision ${r.previousRevision} -> ${r.targetRevision}, phase ${r.phase}`,
          r,
        );
        return options['watch'] === true ? watch(ctx, r.id, sleep) : 0;
      },
    },
    {
      group: 'rollouts',
      verb: 'list',
      args: ['WORKLOAD'],
      summary: "List a workload's rollouts, newest first.",
      options: {},
      async run(ctx, { positionals: [ref] }) {
        const w = await resolveWorkload(ctx.client, ref!);
        const items = await listAll<Rollout>(ctx.client, `/workloads/${seg(w.id)}/rollouts`);
        const now = ctx.now();
        print(
          ctx,
          items,
          [
            { header: 'id', value: (r) => r.id },
            { header: 'phase', value: (r) => r.phase },
            { header: 'revision', value: (r) => `${r.previousRevision}->${r.targetRevision}` },
            { header: 'wave', value: (r) => orDash(r.currentWave) },
            { header: 'created', value: (r) => age(r.createdAt, now) },
            { header: 'message', value: (r) => r.message },
          ],
          items,
        );
        return 0;
      },
    },
    {
      group: 'rollouts',
      verb: 'get',
      args: ['ID'],
      summary: 'Show a rollout: phase, waves and clusters.',
      options: {},
      async run(ctx, { positionals: [id] }) {
        const r = await ctx.client.request<Rollout>('GET', `/rollouts/${seg(id!)}`);
        ctx.stdout(ctx.format === 'table' ? renderRollout(r, ctx.now()) : renderData(ctx.format, r));
        return 0;
      },
    },
    {
      group: 'rollouts',
      verb: 'watch',
      args: ['ID'],
      summary: 'Follow the rollout events until it ends; exit 0 only if it Succeeded.',
      options: {},
      run: (ctx, { positionals: [id] }) => watch(ctx, id!, sleep),
    },
    control('pause', 'Pause a rollout (clusters in progress finish; no new ones start).'),
    control('resume', 'Resume a paused rollout.'),
    control('approve', 'Approve the wave waiting for approval.'),
    control('abort', 'Abort a rollout (clusters stay where they are).'),
    control('retry', 'Retry the failed clusters of a rollout.'),
    {
      group: 'rollouts',
      verb: 'rollback',
      args: ['ID'],
      summary: "Roll back: a new rollout to this rollout's previous revision.",
      options: {
        watch: { type: 'boolean', description: 'then follow its events until it ends (exit 0 only if it Succeeded)' },
      },
      async run(ctx, { positionals: [id], options }) {
        const r = await ctx.client.request<Rollout>('POST', `/rollouts/${seg(id!)}/rollback`);
        confirm(ctx, `rollout ${r.id} started: rollback to revision ${r.targetRevision}`, r);
        return options['watch'] === true ? watch(ctx, r.id, sleep) : 0;
      },
    },
  ];
}

async function readStrategy(ctx: CliContext, file: string): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = parseYaml(await ctx.readFile(file));
  } catch (cause) {
    if (cause instanceof CliError) throw cause;
    throw new CliError('CLI_ERR_FILE', `${file}: not valid YAML or JSON: ${(cause as Error).message.split('\n')[0]}`, {
      cause,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError('CLI_ERR_FILE', `${file}: the strategy must be an object ({ waves: [...] })`);
  }
  return value as Record<string, unknown>;
}
