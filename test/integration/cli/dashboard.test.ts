/**
 * The dashboard in a real headless Chromium against a real hub: sign in with a token, clusters
 * and workload status rendered from the API (a hostile label stays text), a rollout followed live
 * from the event stream, a control that pauses it, and a rollout previewed and then started.
 * Needs Debian's chromium, which scripts/setup.sh installs; without it the suite fails rather
 * than passing unseen.
 */
import { newAgentKey } from '@flotilla/api';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneSetSpec } from '../hub/fixtures.js';
import { startFleetNats, startTestHub, type FleetNats, type TestHub } from '../hub/fleet.js';
import { heartbeat, type Harness } from '../rollouts/harness.js';
import { chromiumPath, launchChromium, type Browser, type Page } from './browser.js';

const chromium = chromiumPath();
const XSS = '<img src=x onerror=window.__owned=1>';

let nats: FleetNats;
let t: TestHub;
let browser: Browser;
let beats: ReturnType<typeof setInterval> | undefined;
let rolloutId = '';
let workloadId = '';

async function api<T>(method: string, path: string, token: string, body?: unknown): Promise<T> {
  const res = await fetch(`${t.hub.url}/api/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

beforeAll(async () => {
  if (!chromium) throw new Error('no Chromium found: run scripts/setup.sh (apt-get install chromium)');
  nats = await startFleetNats();
  t = await startTestHub(nats);
  const sim = { hub: t.db, now: () => Date.now() } as unknown as Harness;
  for (const name of ['ui-a', 'ui-b']) {
    await api('POST', '/clusters/register', t.bootstrapToken, {
      name,
      labels: { fleet: 'ui', note: 'canary' },
      publicKey: newAgentKey().publicKey,
    });
    await api('POST', `/clusters/${name}/accept`, t.operatorToken);
  }
  // The API refuses labels that are not Kubernetes labels; a row from before it did still holds one.
  await t.db.pool.query(`update clusters set labels = $1 where name = 'ui-b'`, [
    JSON.stringify({ fleet: 'ui', note: XSS }),
  ]);
  await heartbeat(sim, ['ui-a', 'ui-b']);
  beats = setInterval(() => void heartbeat(sim, ['ui-a', 'ui-b']).catch(() => undefined), 3000);
  const placement = { clusterSelector: { matchLabels: { fleet: 'ui' } } };
  const w = await api<{ id: string }>('POST', '/workloads', t.operatorToken, {
    kind: 'CloneSet',
    name: 'shop',
    namespace: 'default',
    spec: cloneSetSpec(2, 'registry.local/shop:1'),
    placement,
    updatePolicy: 'Rollout',
  });
  await api('PUT', `/workloads/${w.id}`, t.operatorToken, {
    spec: cloneSetSpec(2, 'registry.local/shop:2'),
    placement,
  });
  const r = await api<{ id: string }>('POST', `/workloads/${w.id}/rollouts`, t.operatorToken, {
    strategy: {
      waves: [
        { name: 'canary', clusters: { names: ['ui-a'] }, soakSeconds: 600, approval: 'Before' },
        { name: 'main' },
      ],
    },
  });
  rolloutId = r.id;
  workloadId = w.id;
  browser = await launchChromium(chromium);
});

afterAll(async () => {
  clearInterval(beats);
  await browser?.close();
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
});

describe('dashboard in Chromium', () => {
  let page: Page;

  it('asks for a token, then shows the clusters with hostile labels as text', async () => {
    page = await browser.open(`${t.hub.url}/`);
    await page.waitFor(`document.querySelector('form[data-form=login]')`);
    expect(await page.evaluate<string>('location.pathname')).toBe('/ui/');
    // A wrong token is refused by the API and the form comes back with the reason.
    await page.evaluate(`(() => {
      document.querySelector('input[name=token]').value = 'flt_wrong';
      document.querySelector('form[data-form=login] button').click();
    })()`);
    await page.waitFor(`document.querySelector('#login .error')`);
    expect(await page.evaluate<string>(`document.querySelector('#login .error').textContent`)).toContain(
      'the token is unknown or revoked',
    );
    expect(await page.evaluate<string | null>(`sessionStorage.getItem('flotilla.token')`)).toBeNull();

    await page.evaluate(`(() => {
      document.querySelector('input[name=token]').value = ${JSON.stringify(t.operatorToken)};
      document.querySelector('form[data-form=login] button').click();
    })()`);
    await page.waitFor(`document.querySelector('#clusters table') && document.querySelector('#workloads table')`);
    const clusters = await page.evaluate<string>(`document.querySelector('#clusters').textContent`);
    expect(clusters).toContain('ui-a');
    expect(clusters).toContain('Online');
    expect(clusters).toContain(`note=${XSS}`);
    expect(await page.evaluate<number>(`document.querySelectorAll('#clusters img').length`)).toBe(0);
    expect(await page.evaluate<unknown>('window.__owned')).toBeUndefined();

    // Signed out, a wrong token and at once the right one: the refusals of the wrong one arrive
    // after the right one is in and must not sign it out.
    await page.evaluate(`document.querySelector('[data-action=signout]').click()`);
    await page.waitFor(`document.querySelector('form[data-form=login]') && !document.querySelector('#login').hidden`);
    await page.evaluate(`(() => {
      const input = document.querySelector('input[name=token]');
      const button = document.querySelector('form[data-form=login] button');
      input.value = 'flt_wrong';
      button.click();
      input.value = ${JSON.stringify(t.operatorToken)};
      button.click();
    })()`);
    await page.waitFor(`document.querySelector('#clusters table') && !document.querySelector('#dashboard').hidden`);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await page.evaluate<boolean>(`document.querySelector('#login').hidden`)).toBe(true);
    expect(await page.evaluate<string | null>(`sessionStorage.getItem('flotilla.token')`)).toBe(t.operatorToken);
    expect(await page.evaluate<string>(`document.querySelector('#error').textContent`)).toBe('');
  });

  it('shows a workload status and its rollout live, approves, pauses, resumes and aborts it, then rolls it back', async () => {
    await page.evaluate(`document.querySelector('[data-action=select-workload]').click()`);
    await page.waitFor(`document.querySelector('#status .aggregate') && document.querySelector('#rollouts table')`);
    expect(await page.evaluate<string>(`document.querySelector('#status').textContent`)).toContain('2 clusters');
    await page.evaluate(`document.querySelector('[data-action=select-rollout]').click()`);
    await page.waitFor(`document.querySelector('#rollout .live') && document.querySelector('#events li')`);
    const rollout = await page.evaluate<string>(`document.querySelector('#rollout').textContent`);
    expect(rollout).toContain(rolloutId);
    expect(rollout).toContain('WaitingApproval');
    expect(await page.evaluate<string>(`document.querySelector('#events').textContent`)).toContain(
      'rollout created by',
    );

    const phase = async (): Promise<string> =>
      (await api<{ phase: string }>('GET', `/rollouts/${rolloutId}`, t.viewerToken)).phase;
    const click = (control: string): Promise<unknown> =>
      page.evaluate(`document.querySelector('[data-action=control][data-control=${control}]').click()`);
    const offered = (control: string): string =>
      `document.querySelector('[data-action=control][data-control=${control}]')`;

    await click('approve');
    await page.waitFor(`${offered('pause')} && !${offered('approve')}`);
    expect(await phase()).toBe('Progressing');
    await click('pause');
    await page.waitFor(offered('resume'));
    expect(await phase()).toBe('Paused');
    expect(await page.evaluate<string>(`document.querySelector('#rollouts').textContent`)).toContain('Paused');
    // Each control arrives as an event on the live stream too.
    await page.waitFor(`document.querySelector('#events').textContent.includes('→ Paused')`);
    await click('resume');
    await page.waitFor(`${offered('pause')} && !${offered('resume')}`);
    await click('abort');
    await page.waitFor(`!${offered('abort')} && document.querySelector('#rollout').textContent.includes('not live')`);
    expect(await phase()).toBe('Aborted');

    // Rollback: a new rollout back to revision 1, which the view opens and follows.
    await page.evaluate(`document.querySelector('[data-action=rollback][data-id="${rolloutId}"]').click()`);
    await page.waitFor(`document.querySelector('#rollout .rollback-of') && document.querySelector('#rollout .live')`);
    expect(await page.evaluate<string>(`document.querySelector('#rollout .rollback-of').textContent`)).toContain(
      rolloutId,
    );
    const list = await api<{ items: { id: string; rollbackOf: string | null; targetRevision: number }[] }>(
      'GET',
      `/workloads/${workloadId}/rollouts`,
      t.viewerToken,
    );
    const rollback = list.items.find((r) => r.rollbackOf === rolloutId);
    expect(rollback?.targetRevision).toBe(1);
    expect(await page.evaluate<string>(`document.querySelector('#rollout h3 code').textContent`)).toBe(rollback?.id);
    expect(
      await page.evaluate<number>(`document.querySelectorAll('#rollouts [data-action=select-rollout]').length`),
    ).toBe(2);
    if (process.env.FLOTILLA_DASHBOARD_SCREENSHOT) {
      writeFileSync(process.env.FLOTILLA_DASHBOARD_SCREENSHOT, await page.screenshot());
    }
    await api('POST', `/rollouts/${rollback!.id}/abort`, t.operatorToken, {});
  });

  it('previews a strategy before it offers to start it, then starts exactly that plan', async () => {
    const strategy = { waves: [{ name: 'first', clusters: { names: ['ui-b'] } }, { name: 'then' }] };
    expect(await page.evaluate<boolean>(`document.querySelector('#new-rollout').hidden`)).toBe(false);
    expect(await page.evaluate<unknown>(`document.querySelector('[data-action=start-rollout]')`)).toBeNull();
    await page.evaluate(`(() => {
      document.querySelector('#new-rollout textarea').value = ${JSON.stringify(JSON.stringify(strategy))};
      document.querySelector('form[data-form=preview] button').click();
    })()`);
    await page.waitFor(`document.querySelector('[data-action=start-rollout]')`);
    const shown = await page.evaluate<string>(`document.querySelector('#new-rollout').textContent`);
    expect(shown).toContain('Preview: revision 1 → 2');
    expect(shown).toContain('spec.template.spec.containers[0].image');
    const before = await api<{ items: unknown[] }>('GET', `/workloads/${workloadId}/rollouts`, t.viewerToken);
    expect(before.items).toHaveLength(2);

    await page.evaluate(`document.querySelector('[data-action=start-rollout]').click()`);
    await page.waitFor(
      `document.querySelector('#rollout .live') && document.querySelectorAll('#rollouts [data-action=select-rollout]').length === 3`,
    );
    const list = await api<{ items: { id: string; waves: { name: string; members: string[] }[] }[] }>(
      'GET',
      `/workloads/${workloadId}/rollouts`,
      t.viewerToken,
    );
    const started = list.items[0]!;
    expect(started.waves.map((w) => [w.name, w.members])).toEqual([
      ['first', ['ui-b']],
      ['then', ['ui-a']],
    ]);
    expect(await page.evaluate<string>(`document.querySelector('#rollout h3 code').textContent`)).toBe(started.id);
    expect(await page.evaluate<unknown>(`document.querySelector('[data-action=start-rollout]')`)).toBeNull();
  });
});
