// The job drawer (#job=ID): explanation, timeline, placement, request,
// cancel/release, and the task's log with follow.

import { api, call, fragment } from './api.js';
import { RUNNING, state } from './state.js';
import {
  $,
  clock,
  colorClass,
  duration,
  el,
  etaText,
  gpuAsk,
  localTimes,
  parseTime,
  relative,
  shortClock,
  showProblem,
} from './util.js';

const LOG_POLL_MS = 2000;
const LOG_KEEP_BYTES = 256 * 1024;

export function route() {
  const id = Number(fragment().get('job'));
  if (!id) {
    closeDetail();
    return;
  }
  if (state.detail && state.detail.id === id) return;
  closeDetail();
  state.detail = { id, job: null, explanation: null, log: null };
  $('job-detail').hidden = false;
  $('job-detail').dataset.job = id;
  $('job-title').textContent = `Job ${id}`;
  $('job-body').replaceChildren(el('p', { class: 'muted', text: 'loading…' }));
  $('job-title').focus({ preventScroll: true });
  if (state.token) refreshDetail().catch(() => {});
}

export function closeDetail() {
  if (state.detail && state.detail.log) clearTimeout(state.detail.log.timer);
  state.detail = null;
  $('job-detail').hidden = true;
  delete $('job-detail').dataset.job;
  for (const row of document.querySelectorAll('#queue-rows tr.selected'))
    row.classList.remove('selected');
}

export async function refreshDetail() {
  const detail = state.detail;
  if (!detail) return;
  try {
    const [job, explanation] = await Promise.all([
      api(`/api/v1/jobs/${detail.id}`),
      api(`/api/v1/jobs/${detail.id}/explain`),
    ]);
    if (state.detail !== detail) return; // closed or switched meanwhile
    detail.job = job;
    detail.explanation = explanation;
    renderDetail(detail);
  } catch (error) {
    if (state.detail !== detail || error.status === 401) return;
    if (detail.log) clearTimeout(detail.log.timer);
    detail.log = null;
    $('job-body').replaceChildren(el('p', { class: 'problem', text: error.message }));
  }
}

function renderDetail(detail) {
  const { job, explanation } = detail;
  $('job-title').replaceChildren(
    `Job ${job.id}${job.name ? ` · ${job.name}` : ''} `,
    el('span', { class: 'badge', 'data-state': job.state, text: job.state }),
  );
  let summary = $('job-summary');
  if (!summary) {
    summary = el('div', { id: 'job-summary' });
    $('job-body').replaceChildren(summary);
  }
  summary.replaceChildren(
    explanationBox(job, explanation),
    el('h3', { text: 'Timeline' }),
    timeline(job, explanation),
    el('h3', { text: 'Placement' }),
    placement(job),
    el('h3', { text: 'Request' }),
    requestFacts(job),
    actions(job),
  );
  if (!detail.log && (job.start_time || (job.placement && job.placement.length))) {
    detail.log = { task: 0, offset: 0, follow: true, timer: null, text: '' };
    $('job-body').append(logSection(detail));
    pollLog(detail);
  }
}

function explanationBox(job, explanation) {
  const facts = [];
  const add = (term, ...value) => facts.push(el('dt', { text: term }), el('dd', {}, ...value));
  const reason = explanation.reason || job.reason;
  let sentence = explanation.message || job.message;
  if (!sentence) {
    if (RUNNING.has(job.state))
      sentence = `${job.state}: ${gpuAsk(job)} on ${(job.placement || []).map((t) => t.node).join(', ') || 'its nodes'}`;
    else if (job.state === 'succeeded') sentence = 'finished successfully';
    else sentence = job.state;
  }
  if (reason) add('Reason', el('code', { text: reason }));
  if (explanation.position !== null && explanation.position !== undefined)
    add('Position', `${explanation.position + 1} in the queue`);
  if (explanation.blocker)
    add(
      'Blocked by',
      el('a', { href: `#job=${explanation.blocker}`, text: `job ${explanation.blocker}` }),
    );
  const eta = parseTime(explanation.eta);
  if (eta !== null)
    add(
      'ETA',
      el('time', { datetime: explanation.eta, text: etaText(explanation) }),
      ` (${relative(eta)})`,
    );
  else if (job.state === 'pending')
    add(
      'ETA',
      el('span', { class: 'muted', text: 'not known yet (no time limit or estimate ahead of it)' }),
    );
  const told = firstEtaText(job.first_eta);
  if (told) add('First ETA', told);
  if (job.exit_code !== null && job.exit_code !== undefined)
    add('Exit code', String(job.exit_code));
  if (job.signal) add('Signal', String(job.signal));
  return el(
    'section',
    {
      id: 'job-explanation',
      class: 'explanation',
      'data-reason': reason || null,
      'aria-label': 'Why',
    },
    el('p', { class: 'sentence', text: localTimes(sentence) }),
    facts.length ? el('dl', { class: 'facts' }, facts) : null,
  );
}

// What a started job was told while it waited, and how it turned out, as
// `berth show` says it: "expected 14:05, 80%: 13:50-14:40; started 14:12:
// right, inside the 80%"; null for a job never given an ETA.
function firstEtaText(first) {
  const started = first ? parseTime(first.started) : null;
  if (started === null) return null;
  const told = etaText({ eta: first.expected, eta_low: first.low, eta_high: first.high });
  const right = first.kept ? 'right' : 'not within a quarter of the wait';
  const inside = first.inside ? 'inside the 80%' : 'outside the 80%';
  return `${told}; started ${shortClock(started)}: ${right}, ${inside}`;
}

function timeline(job, explanation) {
  const submitted = parseTime(job.submit_time);
  const started = parseTime(job.start_time);
  const ended = parseTime(job.end_time);
  const eta = parseTime(explanation.eta);
  const step = (done, title, when, note) =>
    el(
      'li',
      { 'data-done': done ? '1' : '0' },
      el('div', { text: title }),
      el(
        'div',
        { class: 'when' },
        when ? el('time', { datetime: new Date(when).toISOString(), text: clock(when) }) : null,
        note ? `${when ? ' · ' : ''}${note}` : null,
      ),
    );
  const items = [step(true, 'Submitted', submitted, submitted ? relative(submitted) : null)];
  if (started) {
    items.push(
      step(
        true,
        job.attempts > 1 ? `Started (run ${job.attempts})` : 'Started',
        started,
        submitted ? `waited ${duration((started - submitted) / 1000)}` : null,
      ),
    );
  } else {
    items.push(step(false, 'Start', eta, eta ? `expected ${relative(eta)}` : 'not started yet'));
  }
  if (ended) {
    items.push(
      step(
        true,
        `Ended: ${job.state}`,
        ended,
        started ? `ran ${duration((ended - started) / 1000)}` : null,
      ),
    );
  } else if (started) {
    const limit = job.time_limit_s ? started + job.time_limit_s * 1000 : null;
    items.push(
      step(
        false,
        limit ? 'Ends at the latest (time limit)' : 'End',
        limit,
        `running for ${duration((Date.now() - started) / 1000)}`,
      ),
    );
  }
  return el('ol', { class: 'timeline', id: 'job-timeline' }, items);
}

function placement(job) {
  if (!job.placement || !job.placement.length) {
    return el('p', {
      class: 'muted',
      id: 'job-placement',
      text: `Not placed (asks for ${gpuAsk(job)}).`,
    });
  }
  return el(
    'ul',
    { id: 'job-placement' },
    job.placement.map((task, i) =>
      el(
        'li',
        {},
        `task ${i} → `,
        el('strong', { text: task.node }),
        ` GPU ${task.gpus.join(', ')} `,
        task.gpus.map((gpu) =>
          el('span', {
            class: `chip ${colorClass(job.id)}`,
            'data-gpu': `${task.node}/${gpu}`,
            title: `${task.node}/${gpu}`,
          }),
        ),
      ),
    ),
  );
}

function requestFacts(job) {
  const facts = [];
  const add = (term, value) => {
    if (value === null || value === undefined || value === '') return;
    facts.push(el('dt', { text: term }), el('dd', { text: value }));
  };
  add('User', job.user);
  add('Queue', job.queue || 'default');
  add('Priority', job.priority);
  add('Asks for', gpuAsk(job));
  if (job.cpu_milli || job.memory_mib) {
    add(
      'CPUs / memory',
      `${(job.cpu_milli || 0) / 1000} CPUs · ${job.memory_mib || 0} MiB per task`,
    );
  }
  add('Constraint', job.constraint);
  add('Nodes', job.nodelist && job.nodelist.length ? `any of ${job.nodelist.join(', ')}` : null);
  add('Not on', job.exclude && job.exclude.length ? job.exclude.join(', ') : null);
  add('GPU group', job.gpus_in_one_group ? "each task's GPUs in one interconnect group" : null);
  add('Time limit', job.time_limit_s ? duration(job.time_limit_s) : 'none');
  add('Estimate', job.estimate_s ? duration(job.estimate_s) : null);
  add('Preemptible', job.preemptible ? `yes (grace ${duration(job.grace_s)})` : 'no');
  add('Retries', job.retries ? `${job.retries} (runs so far: ${job.attempts})` : null);
  add('Depends on', job.depends_on && job.depends_on.length ? job.depends_on.join(', ') : null);
  add('Array', job.array_parent ? `index ${job.array_index} of job ${job.array_parent}` : null);
  if (job.command && job.command.length) add('Command', job.command.join(' '));
  else if (job.script) add('Script', `${job.script.split('\n').length} lines`);
  add('Working dir', job.workdir);
  return el('dl', { class: 'facts' }, facts);
}

function actions(job) {
  const buttons = [];
  const act = (label, path, danger) => {
    const button = el('button', { type: 'button', class: danger ? 'danger' : null, text: label });
    let armed = false;
    button.addEventListener('click', async () => {
      if (!armed) {
        // a second click confirms
        armed = true;
        button.textContent = `Confirm: ${label.toLowerCase()}`;
        return;
      }
      button.disabled = true;
      try {
        await api(path, { method: 'POST' });
        window.dispatchEvent(new Event('berth:refresh'));
      } catch (error) {
        showProblem(error.message);
      }
    });
    return button;
  };
  const live = !['succeeded', 'failed', 'cancelled', 'timeout'].includes(job.state);
  const mine = state.me && (state.me.role === 'admin' || state.me.user === job.user);
  if (live && mine) buttons.push(act('Cancel job', `/api/v1/jobs/${job.id}/cancel`, true));
  if (job.state === 'held' && job.reason === 'held' && mine)
    buttons.push(act('Release', `/api/v1/jobs/${job.id}/release`, false));
  return buttons.length ? el('div', { class: 'actions' }, buttons) : null;
}

function logSection(detail) {
  const job = detail.job;
  const log = detail.log;
  const pre = el('pre', {
    id: 'job-log',
    class: 'log',
    tabindex: '0',
    'aria-label': 'Task output',
  });
  const status = el('span', { id: 'job-log-status', class: 'muted' });
  const follow = el('input', { type: 'checkbox', id: 'job-log-follow', checked: true });
  follow.addEventListener('change', () => {
    log.follow = follow.checked;
    if (log.follow) pollLog(detail);
  });
  const controls = [el('label', {}, follow, ' follow')];
  if (job.tasks > 1) {
    const select = el(
      'select',
      { id: 'job-log-task', 'aria-label': 'Task' },
      Array.from({ length: job.tasks }, (_, i) => el('option', { value: i, text: `task ${i}` })),
    );
    select.addEventListener('change', () => {
      log.task = Number(select.value);
      log.offset = 0;
      log.text = '';
      pre.textContent = '';
      pollLog(detail);
    });
    controls.unshift(select);
  }
  controls.push(status);
  return el(
    'section',
    { id: 'job-logs', 'aria-label': 'Logs' },
    el('h3', { text: 'Logs' }),
    el('div', { class: 'log-controls' }, controls),
    pre,
  );
}

async function pollLog(detail) {
  const log = detail.log;
  clearTimeout(log.timer);
  const pre = $('job-log');
  const status = $('job-log-status');
  if (!pre || state.detail !== detail) return;
  let running = false;
  try {
    const response = await call(
      `/api/v1/jobs/${detail.id}/logs?task=${log.task}&offset=${log.offset}`,
    );
    const body = await response.text();
    if (state.detail !== detail) return;
    if (!response.ok) {
      let message = `HTTP ${response.status}`;
      try {
        message = JSON.parse(body).error.message;
      } catch (e) {
        /* not JSON */
      }
      if (response.status === 403)
        message = "Logs are shown to the job's owner and to admins only.";
      status.textContent = message;
      running = response.status === 503; // the agent may come back
    } else {
      const size = Number(response.headers.get('X-Berth-Log-Size'));
      running = response.headers.get('X-Berth-Task-Running') === '1';
      const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      log.text += body;
      if (log.text.length > LOG_KEEP_BYTES) log.text = log.text.slice(-LOG_KEEP_BYTES);
      log.offset =
        Number.isFinite(size) && size > 0
          ? size
          : log.offset + new TextEncoder().encode(body).length;
      pre.textContent = log.text || '(no output yet)';
      if (atBottom || log.follow) pre.scrollTop = pre.scrollHeight;
      status.textContent = `${log.offset} bytes · ${running ? 'task running' : 'task ended'}`;
    }
  } catch (error) {
    if (error.status === 401) return;
    status.textContent = error.message;
    running = true;
  }
  if (running && log.follow && state.detail === detail) {
    log.timer = setTimeout(() => pollLog(detail), LOG_POLL_MS);
  }
}
