/* global document, sessionStorage, fetch, AbortController, FormData, TextDecoder, setTimeout, setInterval, clearInterval */
/**
 * The dashboard's glue: asks for a token (kept in sessionStorage, i.e. this tab only), reads the
 * hub's REST API with it, follows a rollout's server-sent events through fetch (EventSource
 * cannot send the bearer token), and puts the HTML that render.js builds into the page. No
 * inline scripts or handlers: clicks are delegated by `data-action` attributes (see the CSP).
 */
import { createSseParser } from './sse.js';
import * as view from './render.js';

const TOKEN_KEY = 'flotilla.token';
const REFRESH_MS = 10_000;
const RECONNECT_MS = 2000;
const MAX_EVENTS = 500;

const state = {
  clusters: [],
  workloads: [],
  workloadId: undefined,
  status: undefined,
  rollouts: [],
  rolloutId: undefined,
  rollout: undefined,
  events: [],
  live: false,
  /** The start form: the strategy text, and the preview and strategy it was made for. */
  newRollout: { strategy: '{"waves": [{"name": "all", "soakSeconds": 60}]}', preview: undefined, previewed: undefined },
};

/** @type {AbortController | undefined} */
let stream;
let refreshTimer;

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const token = () => sessionStorage.getItem(TOKEN_KEY);

class ApiFailure extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

function showError(err) {
  $('error').innerHTML = err ? view.renderError(err) : '';
}

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  stream?.abort();
  clearInterval(refreshTimer);
  $('dashboard').hidden = true;
  $('signout').hidden = true;
  $('login').hidden = false;
  $('login').innerHTML = view.renderLogin({ error: message });
}

async function api(method, path, body) {
  const sentToken = token();
  const res = await fetch(`/api/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${sentToken ?? ''}`,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.ok) return res.status === 204 ? undefined : res.json();
  const payload = await res.json().catch(() => ({}));
  const e = payload.error ?? {};
  // A refusal of a token the user has since replaced (a request still in flight from a wrong
  // sign-in) must not sign out the new session.
  if (res.status === 401 && token() === sentToken) signOut(`The hub refused the token: ${e.message ?? res.statusText}`);
  throw new ApiFailure(res.status, e.code, e.message ?? res.statusText, e.details);
}

async function listAll(path) {
  const items = [];
  let cont;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page = await api('GET', `${path}${sep}limit=1000${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
    items.push(...page.items);
    cont = page.continue;
  } while (cont);
  return items;
}

function renderAll() {
  const now = Date.now();
  $('clusters').innerHTML = view.renderClusters(state.clusters, now);
  $('workloads').innerHTML = view.renderWorkloads(state.workloads, state.workloadId);
  $('workload').hidden = !state.workloadId;
  $('status').innerHTML = state.status ? view.renderWorkloadStatus(state.status, now) : '';
  $('rollouts').innerHTML = state.workloadId ? view.renderRolloutList(state.rollouts, state.rolloutId) : '';
  renderRollout();
}

function renderRollout() {
  if (state.workloadId) $('rollouts').innerHTML = view.renderRolloutList(state.rollouts, state.rolloutId);
  $('rollout-section').hidden = !state.rollout;
  $('rollout').innerHTML = state.rollout ? view.renderRollout(state.rollout, Date.now(), { live: state.live }) : '';
  $('events').innerHTML = state.rollout ? view.renderEvents(state.events) : '';
}

async function refresh() {
  const session = token();
  try {
    const [clusters, workloads] = await Promise.all([listAll('/clusters'), listAll('/workloads')]);
    if (token() !== session) return;
    state.clusters = clusters;
    state.workloads = workloads;
    if (state.workloadId && !workloads.some((w) => w.id === state.workloadId)) closeWorkload();
    if (state.workloadId) await loadWorkload(state.workloadId);
    showError(undefined);
  } catch (err) {
    // What an earlier sign-in asked for is of no interest to the current one.
    if (token() !== session) return;
    showError(err);
  }
  renderAll();
}

/**
 * The start form of a workload that rolls out by rollouts. Rendered only when it changes (not on
 * the periodic refresh), so what the user types stays.
 */
function renderNewRollout() {
  const w = state.workloads.find((x) => x.id === state.workloadId);
  const show = w?.updatePolicy === 'Rollout';
  $('new-rollout').hidden = !show;
  $('new-rollout').innerHTML = show ? view.renderNewRollout(state.newRollout) : '';
}

/** Forgets the open workload and rollout (the workload was deleted, or another one opens). */
function closeWorkload() {
  stream?.abort();
  state.newRollout.preview = undefined;
  state.newRollout.previewed = undefined;
  state.workloadId = undefined;
  state.status = undefined;
  state.rollouts = [];
  state.rolloutId = undefined;
  state.rollout = undefined;
}

async function loadWorkload(id) {
  const path = `/workloads/${encodeURIComponent(id)}`;
  const [status, rollouts] = await Promise.all([api('GET', `${path}/status?limit=1000`), listAll(`${path}/rollouts`)]);
  state.status = status;
  state.rollouts = rollouts;
}

/** The open rollout, also replaced in the workload's list so both show the same phase. */
function setRollout(rollout) {
  state.rollout = rollout;
  state.rollouts = state.rollouts.map((r) => (r.id === rollout.id ? rollout : r));
}

async function loadRollout(id) {
  setRollout(await api('GET', `/rollouts/${encodeURIComponent(id)}`));
}

let pendingRollout;
/** Many events arrive together during a wave: read the rollout once for them. */
function rolloutChanged() {
  if (pendingRollout) return;
  pendingRollout = setTimeout(() => {
    pendingRollout = undefined;
    if (!state.rolloutId) return;
    loadRollout(state.rolloutId).then(renderRollout, showError);
  }, 300);
}

async function readStream(res, ctrl, onEvent) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const parse = createSseParser();
  while (!ctrl.signal.aborted) {
    const { done, value } = await reader.read();
    if (done) return;
    for (const ev of parse(decoder.decode(value, { stream: true }))) if (ev.event === 'rollout') onEvent(ev);
  }
}

/** Follows the rollout's events until it ends, reconnecting from the last event id. */
async function follow(id) {
  stream?.abort();
  const ctrl = new AbortController();
  stream = ctrl;
  state.events = [];
  let lastId = '';
  while (!ctrl.signal.aborted) {
    try {
      const res = await fetch(`/api/v1/rollouts/${encodeURIComponent(id)}/events`, {
        headers: {
          authorization: `Bearer ${token() ?? ''}`,
          accept: 'text/event-stream',
          ...(lastId ? { 'last-event-id': lastId } : {}),
        },
        signal: ctrl.signal,
      });
      if (!res.ok || !res.body) throw new ApiFailure(res.status, undefined, 'the event stream was refused');
      state.live = true;
      renderRollout();
      await readStream(res, ctrl, (ev) => {
        lastId = ev.id;
        state.events.push(JSON.parse(ev.data));
        if (state.events.length > MAX_EVENTS) state.events.splice(0, state.events.length - MAX_EVENTS);
        rolloutChanged();
      });
    } catch (err) {
      if (ctrl.signal.aborted) return;
      showError(err);
    }
    state.live = false;
    try {
      await loadRollout(id);
    } catch (err) {
      showError(err);
    }
    renderRollout();
    if (!state.rollout || view.TERMINAL_PHASES.includes(state.rollout.phase)) return;
    await sleep(RECONNECT_MS);
  }
}

const actions = {
  async 'select-workload'(el) {
    closeWorkload();
    state.workloadId = el.dataset.id;
    await loadWorkload(el.dataset.id);
    renderAll();
    renderNewRollout();
  },
  /** Starts exactly the strategy that was previewed, then follows the new rollout. */
  async 'start-rollout'() {
    const strategy = state.newRollout.previewed;
    if (!state.workloadId || !strategy) return;
    const created = await api('POST', `/workloads/${encodeURIComponent(state.workloadId)}/rollouts`, { strategy });
    showError(undefined);
    state.newRollout.preview = undefined;
    state.newRollout.previewed = undefined;
    await loadWorkload(state.workloadId);
    state.rolloutId = created.id;
    await loadRollout(created.id);
    renderAll();
    renderNewRollout();
    void follow(created.id);
  },
  async 'select-rollout'(el) {
    state.rolloutId = el.dataset.id;
    await loadRollout(el.dataset.id);
    renderAll();
    void follow(el.dataset.id);
  },
  /** The rollback is a new rollout: the workload's list gains it and the view follows it. */
  async rollback(el) {
    const created = await api('POST', `/rollouts/${encodeURIComponent(el.dataset.id)}/rollback`, {});
    showError(undefined);
    if (state.workloadId) await loadWorkload(state.workloadId);
    state.rolloutId = created.id;
    await loadRollout(created.id);
    renderAll();
    void follow(created.id);
  },
  async control(el) {
    setRollout(await api('POST', `/rollouts/${encodeURIComponent(el.dataset.id)}/${el.dataset.control}`, {}));
    showError(undefined);
    renderRollout();
  },
};

function start() {
  $('login').hidden = true;
  $('dashboard').hidden = false;
  $('signout').hidden = false;
  void refresh();
  clearInterval(refreshTimer);
  refreshTimer = setInterval(() => void refresh(), REFRESH_MS);
}

document.addEventListener('click', (event) => {
  const el = event.target.closest('[data-action]');
  if (!el) return;
  if (el.dataset.action === 'signout') return signOut(undefined);
  const action = actions[el.dataset.action];
  if (action) action(el).catch(showError);
});

/** Previews the typed strategy (a dry run); the start button appears with the preview. */
async function preview(form) {
  const text = new FormData(form).get('strategy');
  state.newRollout.strategy = typeof text === 'string' ? text : '';
  state.newRollout.preview = undefined;
  state.newRollout.previewed = undefined;
  let strategy;
  try {
    strategy = JSON.parse(state.newRollout.strategy);
  } catch (err) {
    renderNewRollout();
    throw new ApiFailure(undefined, undefined, `the strategy is not JSON: ${err.message}`);
  }
  const path = `/workloads/${encodeURIComponent(state.workloadId)}/rollouts`;
  state.newRollout.preview = await api('POST', path, { strategy, dryRun: true });
  state.newRollout.previewed = strategy;
  showError(undefined);
  renderNewRollout();
}

document.addEventListener('submit', (event) => {
  const form = event.target;
  if (form.dataset.form === 'preview') {
    event.preventDefault();
    preview(form).catch((err) => {
      renderNewRollout();
      showError(err);
    });
    return;
  }
  if (form.dataset.form !== 'login') return;
  event.preventDefault();
  const value = new FormData(form).get('token');
  if (typeof value !== 'string' || value.trim() === '') return;
  sessionStorage.setItem(TOKEN_KEY, value.trim());
  start();
});

if (token()) start();
else signOut(undefined);
