// @ts-check
/* eslint-disable @typescript-eslint/explicit-module-boundary-types -- browser JS: the JSDoc types every export and tsc checks it (@ts-check) */
/**
 * The dashboard's rendering: pure functions from API objects to HTML strings. Every value that
 * comes from the hub (names, labels, messages) goes through escapeHtml, in text and in
 * attributes alike, so a cluster label or an event message can never inject markup. app.js
 * only fetches, keeps state and puts these strings into the page.
 */

/** @typedef {import('@flotilla/api').Cluster} Cluster */
/** @typedef {import('@flotilla/api').Workload} Workload */
/** @typedef {import('@flotilla/api').WorkloadStatus} WorkloadStatus */
/** @typedef {import('@flotilla/api').Rollout} Rollout */
/** @typedef {import('@flotilla/api').RolloutEvent} RolloutEvent */

/** Phases after which a rollout never changes again. */
export const TERMINAL_PHASES = ['Succeeded', 'Failed', 'Aborted', 'RolledBack'];

/** Which controls the hub accepts in each rollout phase (the rest answer 409). */
const CONTROLS_BY_PHASE = /** @type {Record<string, string[]>} */ ({
  Progressing: ['pause', 'abort'],
  WaitingApproval: ['approve', 'pause', 'abort'],
  Paused: ['resume', 'abort'],
});

/**
 * Escapes text for use in HTML text and in double- or single-quoted attribute values.
 * @param {unknown} value
 * @returns {string}
 */
export function escapeHtml(value) {
  return String(value ?? '').replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * `45s`, `12m`, `3h`, `4d` ago; `never` for null.
 * @param {string | null | undefined} iso
 * @param {number} now epoch milliseconds
 * @returns {string}
 */
export function ago(iso, now) {
  if (!iso) return 'never';
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (Number.isNaN(s)) return 'unknown';
  if (s < 120) return `${s}s ago`;
  if (s < 7200) return `${Math.floor(s / 60)}m ago`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/**
 * A status word as a badge whose CSS class comes from a fixed list (never from the data).
 * @param {string} word
 * @returns {string}
 */
export function badge(word) {
  const good = ['Online', 'Healthy', 'Succeeded', 'accepted'];
  const bad = ['Offline', 'Degraded', 'Failed', 'Aborted', 'Missing', 'RolledBack', 'Removed', 'removed'];
  const wait = ['Pending', 'WaitingApproval', 'Paused', 'pending', 'Skipped'];
  const kind = good.includes(word) ? 'good' : bad.includes(word) ? 'bad' : wait.includes(word) ? 'wait' : 'busy';
  return `<span class="badge ${kind}">${escapeHtml(word)}</span>`;
}

/**
 * @param {Record<string, string> | undefined} labels
 * @returns {string}
 */
function labelList(labels) {
  const entries = Object.entries(labels ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return '<span class="muted">none</span>';
  return entries.map(([k, v]) => `<code class="label">${escapeHtml(k)}=${escapeHtml(v)}</code>`).join(' ');
}

/**
 * A table; `cells` are HTML already escaped by the caller.
 * @param {string[]} headers
 * @param {string[][]} rows
 * @param {string} empty what to say when there are no rows
 * @returns {string}
 */
function table(headers, rows, empty) {
  if (rows.length === 0) return `<p class="muted">${escapeHtml(empty)}</p>`;
  const head = headers.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('');
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/**
 * @param {{ error?: string }} state
 * @returns {string}
 */
export function renderLogin(state) {
  return (
    '<form class="login" data-form="login">' +
    '<h2>Sign in</h2>' +
    '<p>Paste an API token (<code>flotilla tokens create --role viewer NAME</code>). It is kept in this tab only.</p>' +
    '<input type="password" name="token" autocomplete="off" required aria-label="API token">' +
    '<button type="submit">Sign in</button>' +
    (state.error ? `<p class="error">${escapeHtml(state.error)}</p>` : '') +
    '</form>'
  );
}

/**
 * A cluster's maintenance windows (`cron` for `duration` in `zone`); "any time" without any.
 * @param {Cluster['maintenanceWindows'] | undefined} windows
 * @returns {string}
 */
function windowList(windows) {
  if (!windows || windows.length === 0) return '<span class="muted">any time</span>';
  return windows
    .map((w) => `<code>${escapeHtml(w.cron)}</code> for ${escapeHtml(w.duration)} (${escapeHtml(w.timeZone)})`)
    .join('<br>');
}

/**
 * Clusters: health, last heartbeat, labels, maintenance windows, versions.
 * @param {Cluster[]} clusters
 * @param {number} now
 * @returns {string}
 */
export function renderClusters(clusters, now) {
  return table(
    ['Cluster', 'Health', 'State', 'Last heartbeat', 'Labels', 'Maintenance windows', 'Agent', 'Kubernetes'],
    clusters.map((c) => [
      escapeHtml(c.name),
      badge(c.health),
      escapeHtml(c.state),
      escapeHtml(ago(c.lastHeartbeatAt, now)),
      labelList(c.labels),
      windowList(c.maintenanceWindows),
      escapeHtml(c.agentVersion ?? '-'),
      escapeHtml(c.kubernetesVersion ?? '-'),
    ]),
    'No clusters have registered yet.',
  );
}

/**
 * Workloads, each with a button that opens its status and rollouts.
 * @param {Workload[]} workloads
 * @param {string | undefined} selectedId
 * @returns {string}
 */
export function renderWorkloads(workloads, selectedId) {
  return table(
    ['Workload', 'Kind', 'Revision', 'Stable', 'Policy', ''],
    workloads.map((w) => [
      `${w.namespace ? `${escapeHtml(w.namespace)}/` : ''}<strong>${escapeHtml(w.name)}</strong>`,
      escapeHtml(w.kind),
      escapeHtml(w.revision),
      escapeHtml(w.stableRevision),
      escapeHtml(w.updatePolicy),
      `<button data-action="select-workload" data-id="${escapeHtml(w.id)}"${w.id === selectedId ? ' aria-pressed="true"' : ''}>Status</button>`,
    ]),
    'No workloads yet (flotilla workloads apply -f FILE).',
  );
}

/**
 * One row per cluster, then the aggregate.
 * @param {WorkloadStatus} status
 * @param {number} now
 * @returns {string}
 */
export function renderWorkloadStatus(status, now) {
  const a = status.aggregate;
  /** @param {import('@flotilla/api').ObjectStatusRow} r @param {'readyReplicas' | 'updatedReplicas'} k */
  const count = (r, k) => (r.counts ? `${r.counts[k]}/${r.counts.replicas}` : '-');
  const byHealth = Object.entries(a.byHealth)
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([h, n]) => `${badge(h)} ${escapeHtml(n)}`)
    .join(' ');
  const rows = table(
    ['Cluster', 'Health', 'Desired', 'Reported', 'Up to date', 'Ready', 'Updated', 'Reported at', 'Message'],
    status.items.map((r) => [
      escapeHtml(r.cluster),
      badge(r.health),
      escapeHtml(r.desiredRevision),
      escapeHtml(r.reportedRevision ?? '-'),
      r.upToDate ? 'yes' : 'no',
      escapeHtml(count(r, 'readyReplicas')),
      escapeHtml(count(r, 'updatedReplicas')),
      escapeHtml(ago(r.reportedAt, now)),
      escapeHtml(r.message),
    ]),
    'No cluster is targeted by this workload.',
  );
  const summary =
    `<p class="aggregate">Revision ${escapeHtml(status.revision)}: ${escapeHtml(a.clusters)} clusters, ` +
    `${escapeHtml(a.upToDate)} up to date ${byHealth}; replicas ${escapeHtml(a.replicas)}, ` +
    `ready ${escapeHtml(a.readyReplicas)}, updated ${escapeHtml(a.updatedReplicas)}, ` +
    `available ${escapeHtml(a.availableReplicas)}</p>`;
  return summary + rows;
}

/**
 * A workload's rollouts, newest first, each with a button that opens it.
 * @param {Rollout[]} rollouts
 * @param {string | undefined} selectedId
 * @returns {string}
 */
export function renderRolloutList(rollouts, selectedId) {
  return table(
    ['Rollout', 'Phase', 'Revision', 'Wave', 'Message', ''],
    rollouts.map((r) => [
      `<code>${escapeHtml(r.id.slice(0, 8))}</code>`,
      badge(r.phase),
      `${escapeHtml(r.previousRevision)} → ${escapeHtml(r.targetRevision)}`,
      escapeHtml(r.currentWave ?? '-'),
      escapeHtml(r.message),
      `<button data-action="select-rollout" data-id="${escapeHtml(r.id)}"${r.id === selectedId ? ' aria-pressed="true"' : ''}>Open</button>`,
    ]),
    'No rollouts for this workload.',
  );
}

/** Phases in which the hub sends failed clusters through their waves again. */
const RETRY_PHASES = ['Failed', 'Paused', 'Progressing', 'WaitingApproval', 'Succeeded'];

/**
 * The controls that apply to the rollout: those of its phase, `retry` while it has failed
 * clusters, and `rollback` (a new rollout back to the previous revision; an active rollout is
 * aborted first) unless it was rolled back already.
 * @param {Pick<Rollout, 'phase'> & { clusters?: Pick<Rollout['clusters'][number], 'phase'>[] }} rollout
 * @returns {string[]}
 */
export function availableControls(rollout) {
  const controls = [...(CONTROLS_BY_PHASE[rollout.phase] ?? [])];
  if (RETRY_PHASES.includes(rollout.phase) && (rollout.clusters ?? []).some((c) => c.phase === 'Failed')) {
    controls.push('retry');
  }
  if (rollout.phase !== 'RolledBack') controls.push('rollback');
  return controls;
}

/**
 * Per wave: how many of its clusters finished (succeeded or skipped) out of all.
 * @param {Rollout} rollout
 * @returns {{ name: string; phase: string; done: number; failed: number; total: number }[]}
 */
export function waveProgress(rollout) {
  return rollout.waves.map((w) => {
    const members = rollout.clusters.filter((c) => c.wave === w.name);
    return {
      name: w.name,
      phase: w.phase,
      done: members.filter((c) => c.phase === 'Succeeded' || c.phase === 'Skipped').length,
      failed: members.filter((c) => c.phase === 'Failed').length,
      total: members.length,
    };
  });
}

/**
 * What a cluster waits for, with the time the wait ends when known (a maintenance window).
 * @param {Rollout['clusters'][number]} c
 * @returns {string}
 */
export function waitText(c) {
  if (!c.waitingFor) return '-';
  return c.waitingUntil ? `${c.waitingFor} until ${c.waitingUntil}` : c.waitingFor;
}

/**
 * A cluster's metric analysis: verdict, measurements taken of count, each query's latest value.
 * @param {Rollout['clusters'][number]} c
 * @returns {string}
 */
export function analysisText(c) {
  const a = c.analysis;
  if (!a) return '-';
  const values = a.results.map((r) => `${r.name}=${r.value ?? '?'}`).join(' ');
  return `${a.verdict} ${a.measurements}/${a.count}${values ? ` ${values}` : ''}`;
}

/**
 * The revision a cluster reports running, marked when it is not the rollout's target.
 * @param {Rollout['clusters'][number]} c
 * @param {number} target
 * @returns {string}
 */
function runningCell(c, target) {
  if (c.runningRevision === null) return '-';
  const text = escapeHtml(c.runningRevision);
  return c.runningRevision === target ? text : `<span class="wait-text">${text}</span>`;
}

/**
 * How many clusters run each revision, flagged when they differ (revision skew).
 * @param {Rollout} r
 * @returns {string}
 */
export function skewLine(r) {
  if (r.revisions.length === 0) return '';
  const counts = r.revisions.map((x) => `revision ${escapeHtml(x.revision)}: ${escapeHtml(x.clusters)}`).join(', ');
  return `<p class="skew">${r.skew ? '<strong class="bad-text">Revision skew</strong> — ' : ''}${counts}</p>`;
}

/**
 * Why the rollout is not done yet: clusters waiting, by reason.
 * @param {Rollout} r
 * @returns {string}
 */
export function waitsLine(r) {
  const entries = Object.entries(r.waits).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return '';
  return `<p class="waits">Waiting: ${entries.map(([k, n]) => `${escapeHtml(n)} for ${escapeHtml(k)}`).join(', ')}</p>`;
}

/**
 * A rollout: phase, controls, waves with progress, clusters.
 * @param {Rollout} r
 * @param {number} now
 * @param {{ live: boolean }} view whether the event stream is connected
 * @returns {string}
 */
export function renderRollout(r, now, view) {
  const controls = availableControls(r)
    .map(
      (c) =>
        `<button data-action="${c === 'rollback' ? 'rollback' : 'control'}" data-control="${escapeHtml(c)}" ` +
        `data-id="${escapeHtml(r.id)}">${escapeHtml(c)}</button>`,
    )
    .join(' ');
  const waves = waveProgress(r)
    .map((w) => {
      const pct = w.total === 0 ? 0 : Math.round((w.done / w.total) * 100);
      return (
        `<li><span class="wave-name">${escapeHtml(w.name)}</span> ${badge(w.phase)} ` +
        `<progress max="${escapeHtml(w.total)}" value="${escapeHtml(w.done)}">${escapeHtml(pct)}%</progress> ` +
        `${escapeHtml(w.done)}/${escapeHtml(w.total)} done${w.failed > 0 ? `, <span class="bad-text">${escapeHtml(w.failed)} failed</span>` : ''}</li>`
      );
    })
    .join('');
  const clusters = table(
    ['Cluster', 'Wave', 'Phase', 'Step', 'Runs', 'Waiting for', 'Analysis', 'Started', 'Message'],
    r.clusters.map((c) => [
      escapeHtml(c.name),
      escapeHtml(c.wave),
      badge(c.phase),
      escapeHtml(c.step),
      runningCell(c, r.targetRevision),
      escapeHtml(waitText(c)),
      escapeHtml(analysisText(c)),
      escapeHtml(c.startedAt ? ago(c.startedAt, now) : '-'),
      escapeHtml(c.message),
    ]),
    'No clusters in this rollout.',
  );
  return (
    `<div class="rollout-head"><h3>Rollout <code>${escapeHtml(r.id)}</code></h3> ${badge(r.phase)} ` +
    `<span class="${view.live ? 'live' : 'muted'}">${view.live ? 'live' : 'not live'}</span></div>` +
    `<p>Revision ${escapeHtml(r.previousRevision)} → ${escapeHtml(r.targetRevision)}` +
    `${r.currentWave ? `, wave <strong>${escapeHtml(r.currentWave)}</strong>` : ''}. ${escapeHtml(r.message)}` +
    `${r.rollbackOf ? ` <span class="rollback-of">Rolls back <code>${escapeHtml(r.rollbackOf)}</code>.</span>` : ''}</p>` +
    (controls ? `<p class="controls">${controls}</p>` : '') +
    `<ol class="waves">${waves}</ol>` +
    skewLine(r) +
    waitsLine(r) +
    clusters
  );
}

/** @typedef {import('@flotilla/api').RolloutPreview} RolloutPreview */

/**
 * A preview's manifest changes of one cluster, as a list (at most `max`).
 * @param {RolloutPreview['clusters'][number]} c
 * @param {number} max
 * @returns {string}
 */
function diffList(c, max = 20) {
  if (c.diff.length === 0) return '<span class="muted">no change</span>';
  /** @param {unknown} v */
  const val = (v) => (v === undefined ? '(none)' : JSON.stringify(v));
  const items = c.diff
    .slice(0, max)
    .map(
      (d) =>
        `<li><code>${escapeHtml(d.path || '(whole manifest)')}</code>: ${escapeHtml(val(d.from))} → ${escapeHtml(val(d.to))}</li>`,
    )
    .join('');
  const more = c.diff.length > max ? `<li class="muted">${escapeHtml(c.diff.length - max)} more</li>` : '';
  return `<details><summary>${escapeHtml(c.diff.length)} change(s)</summary><ul class="diff">${items}${more}</ul></details>`;
}

/**
 * The plan a start would freeze: waves with expected times, every cluster in or out and why,
 * and each member's manifest changes.
 * @param {RolloutPreview} p
 * @returns {string}
 */
export function renderPreview(p) {
  const waves = table(
    ['Wave', 'Clusters', 'Concurrency', 'Soak', 'Approval', 'Expected start', 'Expected end'],
    p.waves.map((w) => [
      escapeHtml(w.name),
      escapeHtml(w.members.join(', ')),
      escapeHtml(w.maxConcurrency),
      escapeHtml(`${w.soakSeconds}s`),
      escapeHtml(w.approval),
      escapeHtml(w.expectedStartAt),
      escapeHtml(w.expectedEndAt),
    ]),
    'No waves.',
  );
  const clusters = table(
    ['Cluster', 'In plan', 'Wave', 'Runs', 'Expected start', 'Why', 'Manifest'],
    p.clusters.map((c) => [
      escapeHtml(c.name),
      c.included ? 'yes' : 'no',
      escapeHtml(c.wave ?? '-'),
      escapeHtml(c.currentRevision ?? '-'),
      escapeHtml(c.expectedStartAt ?? '-'),
      c.reasons.map((r) => `<strong>${escapeHtml(r.reason)}</strong>: ${escapeHtml(r.message)}`).join('<br>'),
      c.included ? diffList(c) : '-',
    ]),
    'No clusters.',
  );
  return (
    `<p class="preview-head">Preview: revision ${escapeHtml(p.previousRevision)} → ${escapeHtml(p.targetRevision)}, ` +
    `onFailure ${escapeHtml(p.onFailure)}, offline clusters: ${escapeHtml(p.offlinePolicy)}. ` +
    'Expected times assume healthy clusters and approvals at once.</p>' +
    waves +
    clusters
  );
}

/**
 * The form that starts a rollout: a strategy, a preview of the plan it freezes, and only then
 * the start button (which starts exactly the previewed strategy).
 * @param {{ strategy: string; preview?: RolloutPreview }} form
 * @returns {string}
 */
export function renderNewRollout(form) {
  return (
    '<form data-form="preview" class="new-rollout">' +
    '<label>Strategy (JSON RolloutStrategy)<br>' +
    `<textarea name="strategy" rows="6" cols="80" spellcheck="false">${escapeHtml(form.strategy)}</textarea></label><br>` +
    '<button type="submit">Preview</button>' +
    '</form>' +
    (form.preview
      ? renderPreview(form.preview) +
        '<p><button data-action="start-rollout">Start this rollout</button> ' +
        '<span class="muted">starts the strategy previewed above</span></p>'
      : '')
  );
}

/**
 * The latest events, newest first.
 * @param {RolloutEvent[]} events
 * @param {number} max
 * @returns {string}
 */
export function renderEvents(events, max = 100) {
  if (events.length === 0) return '<p class="muted">No events yet.</p>';
  const items = events
    .slice(-max)
    .reverse()
    .map(
      (e) =>
        `<li class="event ${e.level === 'error' || e.level === 'warn' ? 'bad-text' : ''}">` +
        `<time datetime="${escapeHtml(e.at)}">${escapeHtml(e.at.slice(11, 19))}</time> ` +
        `${escapeHtml([e.wave, e.cluster].filter(Boolean).join('/') || '-')} ${escapeHtml(e.message)}</li>`,
    )
    .join('');
  return `<ul class="events">${items}</ul>`;
}

/**
 * An error from the hub's error body `{ error: { code, message, details } }` or a network failure.
 * @param {{ status?: number; code?: string; message: string; details?: { path: string; message: string }[] }} err
 * @returns {string}
 */
export function renderError(err) {
  const details = (err.details ?? [])
    .map((d) => `<li><code>${escapeHtml(d.path)}</code>: ${escapeHtml(d.message)}</li>`)
    .join('');
  return (
    `<div class="error" role="alert">${err.status ? `${escapeHtml(err.status)} ` : ''}` +
    `${err.code ? `${escapeHtml(err.code)}: ` : ''}${escapeHtml(err.message)}` +
    (details ? `<ul>${details}</ul>` : '') +
    '</div>'
  );
}
