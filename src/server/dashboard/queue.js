// The queue: live jobs (pending by position, then held, then running) with
// the reason in words and the ETA.

import { RUNNING, state } from './state.js';
import {
  $,
  clock,
  duration,
  el,
  etaText,
  gpuAsk,
  gpusOfEachTask,
  gpusPerTask,
  localTimes,
  openJob,
  parseTime,
  relative,
} from './util.js';

const MAX_ROWS = 500; // rows drawn in the table
const FILTERS = [
  ['all', 'All', () => true],
  ['pending', 'Pending', (job) => job.state === 'pending'],
  ['running', 'Running', (job) => RUNNING.has(job.state)],
  ['held', 'Held', (job) => job.state === 'held'],
  ['mine', 'Mine', (job) => state.me !== null && job.user === state.me.user],
];

export function renderQueue() {
  const counts = new Map(FILTERS.map(([key, , test]) => [key, state.jobs.filter(test).length]));
  $('queue-filters').replaceChildren(
    ...FILTERS.filter(([key]) => key !== 'mine' || state.me).map(([key, label]) =>
      el('button', {
        type: 'button',
        'data-filter': key,
        'aria-pressed': String(state.filter === key),
        text: `${label} (${counts.get(key)})`,
        onclick: () => {
          state.filter = key;
          renderQueue();
        },
      }),
    ),
  );
  const test = FILTERS.find(([key]) => key === state.filter)[2];
  const rank = (job) => (job.state === 'pending' ? 0 : job.state === 'held' ? 1 : 2);
  const jobs = state.jobs
    .filter(test)
    .sort(
      (a, b) =>
        rank(a) - rank(b) || (a.position ?? Infinity) - (b.position ?? Infinity) || a.id - b.id,
    );
  $('queue-rows').replaceChildren(...jobs.slice(0, MAX_ROWS).map(renderRow));
  $('queue-empty').hidden = jobs.length > 0 && jobs.length <= MAX_ROWS;
  $('queue-empty').textContent = jobs.length
    ? `Showing the first ${MAX_ROWS} of ${jobs.length} jobs; berth queue lists them all.`
    : 'No jobs in the queue.';
}

function renderRow(job) {
  const submitted = parseTime(job.submit_time);
  const started = parseTime(job.start_time);
  const waited =
    started && submitted
      ? (started - submitted) / 1000
      : submitted
        ? (Date.now() - submitted) / 1000
        : null;
  const perTask = gpusPerTask(job);
  const each = gpusOfEachTask(job);
  const gpus = each ? each.join('+') : job.tasks > 1 ? `${job.tasks}×${perTask}` : `${perTask}`;
  return el(
    'tr',
    {
      'data-job-id': job.id,
      'data-job': job.id,
      'data-state': job.state,
      class: state.detail && state.detail.id === job.id ? 'selected' : null,
      onclick: (event) => {
        if (event.target.tagName !== 'A') openJob(job.id);
      },
    },
    el('td', {}, el('a', { href: `#job=${job.id}`, text: `#${job.id}` })),
    el('td', { class: 'name', text: job.name || '—' }),
    el('td', { text: job.user }),
    el('td', {}, el('span', { class: 'badge', 'data-state': job.state, text: job.state })),
    el('td', { class: 'num', 'data-col': 'gpus', title: gpuAsk(job), text: gpus }),
    el('td', { class: 'num', text: duration(waited) }),
    el(
      'td',
      { class: 'why', 'data-col': 'reason', 'data-reason': job.reason || null },
      whyCell(job, started),
    ),
    el(
      'td',
      { class: 'eta', 'data-col': 'eta', 'data-eta': job.eta || null },
      etaCell(job, started),
    ),
  );
}

function whyCell(job, started) {
  if (job.state === 'running' || job.state === 'starting') {
    const where = (job.placement || []).map((task) => `${task.node}: GPU ${task.gpus.join(', ')}`);
    const parts = [where.join('; ') || 'placing'];
    if (started) parts.push(`${job.state} for ${duration((Date.now() - started) / 1000)}`);
    return [parts.join(' · ')];
  }
  const out = [el('div', { class: 'sentence', text: localTimes(job.message || job.reason || '') })];
  if (job.reason) out.push(el('div', { class: 'reason-code', text: job.reason }));
  return out;
}

function etaCell(job, started) {
  if (job.state === 'pending') {
    const eta = parseTime(job.eta);
    if (eta === null) return [el('span', { class: 'muted', text: 'not known yet' })];
    return [
      el('time', { datetime: job.eta, text: etaText(job) }),
      el('div', { class: 'muted', text: relative(eta) }),
    ];
  }
  if (RUNNING.has(job.state) && started && (job.time_limit_s || job.estimate_s)) {
    // The time limit is a promise; the owner's estimate only a guess.
    const [words, seconds] = job.time_limit_s
      ? ['ends by ', job.time_limit_s]
      : ['ends ~', job.estimate_s];
    const end = started + seconds * 1000;
    return [
      el('span', { class: 'muted', text: words }),
      el('time', { datetime: new Date(end).toISOString(), text: clock(end) }),
    ];
  }
  return [el('span', { class: 'muted', text: '—' })];
}
