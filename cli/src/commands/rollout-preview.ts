/** How `rollouts start --dry-run` shows a RolloutPreview in table mode; pure. */
import type { ManifestChange, PreviewCluster, PreviewWave, RolloutPreview } from '@flotilla/api';
import { cell, renderTable, type Column } from '../output.js';

/** Changes shown per cluster; the rest are counted (the JSON output has them all). */
const MAX_CHANGES = 8;
const MAX_VALUE = 60;

const WAVES: Column<PreviewWave>[] = [
  { header: 'wave', value: (w) => w.name },
  { header: 'clusters', value: (w) => w.members.join(',') || '-' },
  { header: 'concurrency', value: (w) => String(w.maxConcurrency) },
  { header: 'soak', value: (w) => `${w.soakSeconds}s` },
  { header: 'approval', value: (w) => w.approval },
  { header: 'expected start', value: (w) => w.expectedStartAt },
  { header: 'expected end', value: (w) => w.expectedEndAt },
];

const CLUSTERS: Column<PreviewCluster>[] = [
  { header: 'cluster', value: (c) => c.name },
  { header: 'in', value: (c) => (c.included ? 'yes' : 'no') },
  { header: 'wave', value: (c) => c.wave ?? '-' },
  { header: 'runs', value: (c) => (c.currentRevision === null ? '-' : String(c.currentRevision)) },
  { header: 'expected start', value: (c) => c.expectedStartAt ?? '-' },
  { header: 'why', value: (c) => c.reasons.map((r) => `${r.reason}: ${r.message}`).join('; ') },
];

function value(v: unknown): string {
  if (v === undefined) return '(none)';
  const text = JSON.stringify(v);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

function changeLine(d: ManifestChange): string {
  return `    ${d.path || '(whole manifest)'}: ${value(d.from)} -> ${value(d.to)}`;
}

/** Per member cluster, the manifest fields that change. */
function changes(p: RolloutPreview): string {
  const lines: string[] = [];
  for (const c of p.clusters.filter((x) => x.included)) {
    lines.push(`  ${c.name}: ${c.diff.length === 0 ? 'no change' : `${c.diff.length} change(s)`}`);
    lines.push(...c.diff.slice(0, MAX_CHANGES).map(changeLine));
    if (c.diff.length > MAX_CHANGES) lines.push(`    … ${c.diff.length - MAX_CHANGES} more (-o yaml shows all)`);
  }
  return lines.map(cell).join('\n');
}

export function renderPreview(p: RolloutPreview): string {
  const head =
    `preview (nothing started): workload ${p.workloadId}, revision ${p.previousRevision} -> ${p.targetRevision}; ` +
    `onFailure ${p.onFailure}, offlinePolicy ${p.offlinePolicy}, failure budget ${p.failureBudget}\n` +
    'expected times assume healthy clusters and approvals at once\n';
  return `${head}\n${renderTable(WAVES, p.waves)}\n${renderTable(CLUSTERS, p.clusters)}\nmanifest changes:\n${changes(p)}\n`;
}
