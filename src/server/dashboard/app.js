// The Berth dashboard: vanilla JavaScript, no framework, no build step.
//
//   token (URL fragment #token=..., then localStorage) -> every few seconds:
//     GET /api/v1/nodes, /api/v1/jobs?live=true, /api/v1/history?since=...
//     -> summary, cluster (a cell per GPU), queue, charts (inline SVG)
//   #job=ID -> the job drawer: /jobs/ID, /jobs/ID/explain, /jobs/ID/logs
//
// Modules: state.js (what the page knows), api.js (token, requests),
// cluster.js, queue.js, charts.js, job.js (the views), util.js (helpers).
// Everything from the API is written with textContent, never as HTML.
// Stable ids and data attributes (data-gpu, data-job, data-job-id,
// data-state, data-reason) are what tests/dashboard_test.py reads.

import { adoptFragmentToken, api, liveJobs, storage, updateHistory } from './api.js';
import { renderCharts } from './charts.js';
import { renderCluster, renderSummary } from './cluster.js';
import { refreshDetail, route } from './job.js';
import { renderQueue } from './queue.js';
import { state } from './state.js';
import { $, clock, showProblem } from './util.js';

const REFRESH_MS = 3000;

function showLogin(message) {
  state.token = null;
  state.me = null;
  clearTimeout(state.timer);
  $('main').hidden = true;
  $('job-detail').hidden = true;
  $('sign-out').hidden = true;
  $('whoami').textContent = '';
  $('login').hidden = false;
  $('updated').textContent = '';
  showProblem(message || null);
  $('token-input').focus();
}

async function refresh() {
  clearTimeout(state.timer);
  if (!state.token) return;
  try {
    if (!state.me) {
      state.me = await api('/api/v1/whoami');
      $('whoami').textContent = `signed in as ${state.me.user} (${state.me.role})`;
    }
    const [nodes, jobs] = await Promise.all([api('/api/v1/nodes'), liveJobs(), updateHistory()]);
    state.nodes = nodes.nodes;
    state.jobs = jobs;
    state.jobsById = new Map(jobs.map((job) => [job.id, job]));
    renderSummary();
    renderCluster();
    renderQueue();
    renderCharts();
    if (state.detail) await refreshDetail();
    showProblem(null);
    $('updated').textContent = `updated ${clock(Date.now())}`;
    document.body.dataset.ready = '1';
  } catch (error) {
    if (error.status === 401) return;
    showProblem(`Could not reach the Berth API: ${error.message}. Retrying…`);
    $('updated').textContent = 'offline';
  }
  state.timer = setTimeout(refresh, REFRESH_MS);
}

function start() {
  adoptFragmentToken();
  if (!state.token) state.token = storage.get();
  $('login-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const token = $('token-input').value.trim();
    if (!token) return;
    storage.set(token);
    state.token = token;
    $('token-input').value = '';
    begin();
  });
  $('sign-out').addEventListener('click', () => {
    storage.clear();
    showLogin('Token forgotten.');
  });
  window.addEventListener('berth:unauthorized', () => {
    showLogin('The token was not accepted. Paste a valid one.');
  });
  window.addEventListener('berth:refresh', () => refresh());
  window.addEventListener('hashchange', () => {
    adoptFragmentToken();
    route();
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && state.detail) location.hash = '';
  });
  route();
  if (state.token) begin();
  else showLogin();
}

function begin() {
  $('login').hidden = true;
  $('main').hidden = false;
  $('sign-out').hidden = false;
  showProblem(null);
  route();
  refresh();
}

start();
