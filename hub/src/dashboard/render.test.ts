import type { Cluster, Rollout, RolloutPreview, WorkloadStatus } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import {
  availableControls,
  badge,
  escapeHtml,
  renderClusters,
  renderError,
  renderEvents,
  renderNewRollout,
  renderPreview,
  renderRollout,
  renderWorkloadStatus,
  renderWorkloads,
  waitText,
  analysisText,
  waveProgress,
} from './public/render.js';

const XSS = `<img src=x onerror="alert('x')">`;
const now = Date.parse('2026-01-01T12:00:00Z');

/** No tag or attribute of the attack string survives: only escaped text does. */
function expectInert(html: string): void {
  expect(html).not.toContain('<img');
  expect(html).not.toMatch(/onerror="/);
  expect(html).toContain('&#60;img src=x onerror=&#34;alert(&#39;x&#39;)&#34;&#62;');
}

const cluster = (over: Partial<Cluster> = {}): Cluster => ({
  name: 'c1',
  labels: {},
  state: 'accepted',
  health: 'Online',
  agentVersion: '0.1.0',
  kubernetesVersion: 'v1.36.0',
  lastHeartbeatAt: '2026-01-01T11:59:50Z',
  registeredAt: '2026-01-01T10:00:00Z',
  acceptedAt: '2026-01-01T10:00:01Z',
  credentialsIssued: true,
  maintenanceWindows: [],
  ...over,
});

const rollout = (over: Partial<Rollout> = {}): Rollout => ({
  id: 'r-1',
  workloadId: 'w-1',
  targetRevision: 2,
  previousRevision: 1,
  rollbackOf: null,
  strategy: {},
  phase: 'Progressing',
  currentWave: 'canary',
  message: '',
  failureBudget: 0,
  onFailure: 'Pause',
  offlinePolicy: 'Skip',
  waves: ['canary', 'main'].map((name) => ({
    name,
    phase: name === 'canary' ? 'Progressing' : 'Pending',
    members: [],
    maxConcurrency: 1,
    failureBudget: 0,
    soakSeconds: 0,
    progressDeadlineSeconds: 600,
    approval: 'None',
    approvedBefore: false,
    approvedAfter: false,
    startedAt: null,
    finishedAt: null,
    message: '',
  })),
  clusters: [
    ['c1', 'canary', 'Succeeded'],
    ['c2', 'main', 'Failed'],
    ['c3', 'main', 'Skipped'],
    ['c4', 'main', 'Pending'],
  ].map(([name, wave, phase]) => ({
    name: name!,
    wave: wave!,
    phase: phase!,
    step: 0,
    startedAt: null,
    deadlineAt: null,
    healthySince: null,
    finishedAt: null,
    message: '',
    waitingFor: phase === 'Pending' ? ('concurrency' as const) : null,
    waitingUntil: null,
    desiredRevision: 2,
    runningRevision: phase === 'Succeeded' ? 2 : 1,
  })),
  waits: { concurrency: 1 },
  revisions: [
    { revision: 1, clusters: 3 },
    { revision: 2, clusters: 1 },
  ],
  skew: true,
  createdAt: '2026-01-01T11:00:00Z',
  updatedAt: '2026-01-01T11:00:00Z',
  createdBy: 'admin',
  ...over,
});

describe('escapeHtml', () => {
  it('escapes every character that can end text or an attribute', () => {
    expect(escapeHtml(`<a href='x' title="y">&\``)).toBe('&#60;a href=&#39;x&#39; title=&#34;y&#34;&#62;&#38;&#96;');
    expect(escapeHtml(null)).toBe('');
    expect(escapeHtml(3)).toBe('3');
  });
});

describe('renderers escape everything that comes from the hub', () => {
  it('clusters: name, labels and versions', () => {
    const html = renderClusters([cluster({ name: XSS, labels: { [XSS]: XSS }, agentVersion: XSS })], now);
    expectInert(html);
    expect(html).toContain('10s ago');
  });

  it('clusters: maintenance windows, escaped', () => {
    const html = renderClusters(
      [cluster({ maintenanceWindows: [{ cron: '0 2 * * SAT', duration: '4h', timeZone: XSS }] }), cluster()],
      now,
    );
    expectInert(html);
    expect(html).toContain('<code>0 2 * * SAT</code> for 4h (');
    expect(html).toContain('<span class="muted">any time</span>');
  });

  it('workloads: names and ids in attributes', () => {
    const html = renderWorkloads(
      [
        {
          id: `" onclick="x`,
          kind: 'CloneSet',
          name: XSS,
          namespace: 'default',
          metadata: {},
          spec: {},
          placement: { clusterSelector: {} },
          overrides: {},
          dependsOn: [],
          revision: 2,
          updatePolicy: 'Rollout',
          stableRevision: 1,
          createdAt: '',
          updatedAt: '',
        },
      ],
      undefined,
    );
    expectInert(html);
    expect(html).toContain('data-id="&#34; onclick=&#34;x"');
  });

  it('status rows, messages and health words', () => {
    const status: WorkloadStatus = {
      workloadId: 'w',
      revision: 2,
      aggregate: {
        clusters: 1,
        upToDate: 0,
        byHealth: { [XSS]: 1 },
        replicas: 2,
        readyReplicas: 1,
        updatedReplicas: 1,
        availableReplicas: 1,
      },
      items: [
        {
          cluster: 'c1',
          workloadId: 'w',
          workloadName: 'web',
          kind: 'CloneSet',
          namespace: 'default',
          name: 'web',
          desiredRevision: 2,
          desiredGeneration: 3,
          reportedRevision: 1,
          reportedGeneration: 2,
          observedGeneration: 2,
          upToDate: false,
          counts: { replicas: 2, readyReplicas: 1, updatedReplicas: 1, updatedReadyReplicas: 1, availableReplicas: 1 },
          health: 'Progressing',
          message: XSS,
          reportedAt: null,
          ageSeconds: null,
        },
      ],
    };
    const html = renderWorkloadStatus(status, now);
    expectInert(html);
    expect(html).toContain('<td>1/2</td>');
    expect(html).toContain('Revision 2: 1 clusters, 0 up to date');
  });

  it('rollouts, events and errors', () => {
    expectInert(renderRollout(rollout({ message: XSS, currentWave: XSS }), now, { live: true }));
    expectInert(
      renderEvents([
        {
          id: '1',
          rolloutId: 'r',
          at: '2026-01-01T11:00:00Z',
          level: 'info',
          message: XSS,
          wave: null,
          cluster: null,
          phase: 'P',
        },
      ]),
    );
    expectInert(
      renderError({ status: 400, code: 'HUB_ERR_INVALID', message: XSS, details: [{ path: XSS, message: 'm' }] }),
    );
  });

  it('badge classes come from a fixed list, not from the data', () => {
    expect(badge('Online')).toBe('<span class="badge good">Online</span>');
    expect(badge(`x" class="evil`)).toBe('<span class="badge busy">x&#34; class=&#34;evil</span>');
  });
});

const preview = (over: Partial<RolloutPreview> = {}): RolloutPreview => ({
  workloadId: 'w-1',
  targetRevision: 2,
  previousRevision: 1,
  failureBudget: 0,
  onFailure: 'Rollback',
  offlinePolicy: 'Skip',
  at: '2026-01-01T12:00:00.000Z',
  waves: [
    {
      name: 'canary',
      members: ['c1'],
      maxConcurrency: 1,
      failureBudget: 0,
      soakSeconds: 60,
      progressDeadlineSeconds: 600,
      approval: 'None',
      canarySteps: [],
      expectedStartAt: '2026-01-01T12:00:00.000Z',
      expectedEndAt: '2026-01-01T12:01:00.000Z',
    },
  ],
  clusters: [
    {
      name: 'c1',
      included: true,
      wave: 'canary',
      reasons: [{ reason: 'window', message: XSS }],
      expectedStartAt: '2026-01-01T12:00:00.000Z',
      currentRevision: 1,
      manifest: {},
      diff: [{ path: 'spec.image', from: 'a:v1', to: XSS }],
    },
    {
      name: 'c2',
      included: false,
      wave: null,
      reasons: [{ reason: 'selector', message: 'not targeted' }],
      expectedStartAt: null,
      currentRevision: null,
      manifest: null,
      diff: [],
    },
  ],
  ...over,
});

describe('rollout preview', () => {
  it('shows waves with expected times, clusters in or out with why, and manifest changes, all escaped', () => {
    const html = renderPreview(preview());
    expectInert(html);
    expect(html).toContain('<td>2026-01-01T12:01:00.000Z</td>');
    expect(html).toContain('<strong>selector</strong>: not targeted');
    expect(html).toContain('<code>spec.image</code>: &#34;a:v1&#34; → ');
    expect(html).toContain('<summary>1 change(s)</summary>');
  });

  it('offers the start button only with a preview', () => {
    const form = renderNewRollout({ strategy: XSS });
    expectInert(form);
    expect(form).toContain('data-form="preview"');
    expect(form).not.toContain('data-action="start-rollout"');
    expect(renderNewRollout({ strategy: '{}', preview: preview() })).toContain('data-action="start-rollout"');
  });
});

describe('rollout view', () => {
  it('offers only the controls the phase accepts, and rollback until rolled back', () => {
    expect(availableControls({ phase: 'Progressing' })).toEqual(['pause', 'abort', 'rollback']);
    expect(availableControls({ phase: 'WaitingApproval' })).toEqual(['approve', 'pause', 'abort', 'rollback']);
    expect(availableControls({ phase: 'Paused' })).toEqual(['resume', 'abort', 'rollback']);
    expect(availableControls({ phase: 'Succeeded' })).toEqual(['rollback']);
    expect(availableControls({ phase: 'RolledBack' })).toEqual([]);
    const html = renderRollout(rollout({ phase: 'Paused' }), now, { live: false });
    expect(html).toContain('data-control="resume"');
    expect(html).not.toContain('data-control="pause"');
    // The rollback makes a new rollout (its own route), so its button has its own action.
    expect(html).toContain('data-action="rollback" data-control="rollback"');
    expect(html).not.toContain('Rolls back');
    const back = renderRollout(rollout({ rollbackOf: XSS }), now, { live: true });
    expect(back).toContain(`Rolls back <code>${escapeHtml(XSS)}</code>`);
    expect(back).not.toContain('<img');
    expect(html).toContain('not live');
  });

  it('offers retry while failed clusters remain, in the phases the hub retries in', () => {
    const failed = [{ phase: 'Succeeded' }, { phase: 'Failed' }];
    expect(availableControls({ phase: 'Failed', clusters: failed })).toEqual(['retry', 'rollback']);
    expect(availableControls({ phase: 'Progressing', clusters: failed })).toEqual([
      'pause',
      'abort',
      'retry',
      'rollback',
    ]);
    expect(availableControls({ phase: 'Failed', clusters: [{ phase: 'Succeeded' }] })).toEqual(['rollback']);
    expect(availableControls({ phase: 'Aborted', clusters: failed })).toEqual(['rollback']);
    expect(availableControls({ phase: 'RolledBack', clusters: failed })).toEqual([]);
  });

  it('counts done (succeeded or skipped) and failed clusters per wave', () => {
    expect(waveProgress(rollout())).toEqual([
      { name: 'canary', phase: 'Progressing', done: 1, failed: 0, total: 1 },
      { name: 'main', phase: 'Pending', done: 1, failed: 1, total: 3 },
    ]);
    expect(renderRollout(rollout(), now, { live: true })).toContain('<progress max="3" value="1">33%</progress>');
  });

  it('shows what each cluster runs and waits for, and flags revision skew', () => {
    const html = renderRollout(rollout(), now, { live: true });
    expect(html).toContain('<strong class="bad-text">Revision skew</strong> — revision 1: 3, revision 2: 1');
    expect(html).toContain('Waiting: 1 for concurrency');
    expect(html).toContain('<td><span class="wait-text">1</span></td><td>concurrency</td>');
    const even = renderRollout(rollout({ skew: false, revisions: [{ revision: 2, clusters: 4 }], waits: {} }), now, {
      live: true,
    });
    expect(even).toContain('<p class="skew">revision 2: 4</p>');
    expect(even).not.toContain('Waiting:');
    expect(
      waitText({ ...rollout().clusters[3]!, waitingFor: 'window', waitingUntil: '2026-01-03T02:00:00.000Z' }),
    ).toBe('window until 2026-01-03T02:00:00.000Z');
  });

  it('shows each cluster’s analysis verdict, measurements and latest values', () => {
    const analysis = {
      attempt: 2,
      verdict: 'Inconclusive' as const,
      measurements: 1,
      count: 3,
      message: 'errors: no data',
      results: [{ name: 'errors', value: null, outcome: 'Inconclusive', message: 'no data' }],
    };
    const r = rollout();
    const clusters = r.clusters.map((c, i) => (i === 0 ? { ...c, analysis } : c));
    const html = renderRollout({ ...r, clusters }, now, { live: true });
    expect(html).toContain('<th>Analysis</th>');
    expect(html).toContain('<td>Inconclusive 1/3 errors=?</td>');
    expect(analysisText(r.clusters[1]!)).toBe('-');
  });

  it('lists events newest first, at most max', () => {
    const events = [1, 2, 3].map((i) => ({
      id: String(i),
      rolloutId: 'r',
      at: `2026-01-01T11:00:0${i}Z`,
      level: 'info',
      message: `m${i}`,
      wave: 'canary',
      cluster: i === 3 ? 'c1' : null,
      phase: 'Progressing',
    }));
    const html = renderEvents(events, 2);
    expect(html.indexOf('m3')).toBeLessThan(html.indexOf('m2'));
    expect(html).not.toContain('m1');
    expect(html).toContain('canary/c1 m3');
  });
});
