/** How rollouts and their events are shown; pure. */
import type { Rollout, RolloutClusterStatus, RolloutEvent, RolloutWaveStatus } from '@flotilla/api';
import { age, cell, orDash, renderData, renderTable, type Column, type OutputFormat } from '../output.js';

/** `rollouts list`: one row per rollout. */
export function rolloutColumns(now: Date): Column<Rollout>[] {
  return [
    { header: 'id', value: (r) => r.id },
    { header: 'phase', value: (r) => r.phase },
    { header: 'revision', value: (r) => `${r.previousRevision}->${r.targetRevision}` },
    { header: 'wave', value: (r) => orDash(r.currentWave) },
    { header: 'created', value: (r) => age(r.createdAt, now) },
    { header: 'message', value: (r) => r.message },
  ];
}

const WAVE_COLUMNS: Column<RolloutWaveStatus>[] = [
  { header: 'wave', value: (w) => w.name },
  { header: 'phase', value: (w) => w.phase },
  { header: 'clusters', value: (w) => w.members.join(',') || '-' },
  { header: 'concurrency', value: (w) => String(w.maxConcurrency) },
  { header: 'soak', value: (w) => `${w.soakSeconds}s` },
  { header: 'approval', value: (w) => w.approval },
  { header: 'message', value: (w) => w.message },
];

function clusterColumns(now: Date): Column<RolloutClusterStatus>[] {
  return [
    { header: 'cluster', value: (c) => c.name },
    { header: 'wave', value: (c) => c.wave },
    { header: 'phase', value: (c) => c.phase },
    { header: 'step', value: (c) => String(c.step) },
    { header: 'runs', value: (c) => (c.runningRevision === null ? '-' : String(c.runningRevision)) },
    { header: 'waiting for', value: waitText },
    { header: 'analysis', value: analysisText },
    { header: 'started', value: (c) => (c.startedAt ? age(c.startedAt, now) : '-') },
    { header: 'message', value: (c) => orDash(c.message) },
  ];
}

/** What a cluster waits for, with the time the wait ends when known (a maintenance window). */
export function waitText(c: RolloutClusterStatus): string {
  if (!c.waitingFor) return '-';
  return c.waitingUntil ? `${c.waitingFor} until ${c.waitingUntil}` : c.waitingFor;
}

/** A cluster's metric analysis: verdict, measurements taken of count, each query's latest value. */
export function analysisText(c: RolloutClusterStatus): string {
  const a = c.analysis;
  if (!a) return '-';
  const values = a.results.map((r) => `${r.name}=${r.value ?? '?'}`).join(' ');
  return `${a.verdict} ${a.measurements}/${a.count}${values ? ` ${values}` : ''}`;
}

/** `revisions 1: 4 clusters, 2: 1 cluster (skew)`; waits by reason; empty lines left out. */
function skewAndWaits(r: Rollout): string[] {
  const lines: string[] = [];
  if (r.revisions.length > 0) {
    const counts = r.revisions.map((x) => `${x.revision}: ${x.clusters}`).join(', ');
    lines.push(`running revisions ${counts}${r.skew ? ' (SKEW)' : ''}`);
  }
  const waits = Object.entries(r.waits).sort(([a], [b]) => a.localeCompare(b));
  if (waits.length > 0) lines.push(`waiting: ${waits.map(([k, n]) => `${n} for ${k}`).join(', ')}`);
  return lines;
}

/** `rollouts get` in table mode: a summary, then one table of waves and one of clusters. */
export function renderRollout(r: Rollout, now: Date): string {
  const head = [
    `rollout ${r.id}`,
    `workload ${r.workloadId}, revision ${r.previousRevision} -> ${r.targetRevision}` +
      (r.rollbackOf ? ` (rollback of ${r.rollbackOf})` : ''),
    `phase ${r.phase}${r.currentWave ? `, wave ${r.currentWave}` : ''}; created ${age(r.createdAt, now)} ago by ${r.createdBy}`,
    ...(r.message ? [`message: ${cell(r.message)}`] : []),
    ...skewAndWaits(r),
    '',
  ].join('\n');
  return `${head}\n${renderTable(WAVE_COLUMNS, r.waves)}\n${renderTable(clusterColumns(now), r.clusters)}`;
}

/** One line per event: `2026-01-02T03:04:05.000Z  info   canary/c1  Progressing  message`. */
export function eventLine(e: RolloutEvent): string {
  const where = [e.wave, e.cluster].filter((x) => x).join('/') || '-';
  return `${e.at}  ${e.level.padEnd(5)}  ${cell(where)}  ${e.phase}  ${cell(e.message)}\n`;
}

/** An event as `rollouts watch` prints it: a line, one JSON object per line, or a YAML document. */
export function eventText(format: OutputFormat, e: RolloutEvent): string {
  if (format === 'table') return eventLine(e);
  return format === 'json' ? `${JSON.stringify(e)}\n` : `---\n${renderData('yaml', e)}`;
}
