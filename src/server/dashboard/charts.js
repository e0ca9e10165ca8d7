// The history charts, drawn as inline SVG: queue length and GPUs allocated
// over time (steps: a value holds until the next sample), and the queue
// wait distribution of the jobs started in the period.

import { state } from './state.js';
import { $, duration, el, svg } from './util.js';

const RANGES = [
  [900, '15 min'],
  [3600, '1 h'],
  [6 * 3600, '6 h'],
  [24 * 3600, '24 h'],
];

const W = 420;
const H = 170;
const M = { left: 36, right: 10, top: 10, bottom: 22 };

// The x axis: the chosen range, narrowed to the history there is (a
// fresh server has minutes, not hours), but never under two minutes.
function timeWindow() {
  const now = Date.now() / 1000;
  const samples = state.history.samples;
  const first = samples.length ? samples[0].time : now;
  const x0 = Math.max(now - state.range, Math.min(first, now - 120));
  return [x0, now];
}

function hhmm(t, seconds) {
  const d = new Date(t * 1000);
  const two = (n) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}${seconds ? `:${two(d.getSeconds())}` : ''}`;
}

function niceMax(value) {
  if (value <= 4) return 4;
  const step = 10 ** Math.floor(Math.log10(value));
  for (const k of [1, 2, 2.5, 5, 10]) if (k * step >= value) return k * step;
  return 10 * step;
}

// A time-series chart: series = [{name, cls, points: [[t, v]]}].
function lineChart(series, { yMax, yFormat, label, area }) {
  const [x0, now] = timeWindow();
  const span = now - x0;
  const x = (t) => M.left + ((t - x0) / span) * (W - M.left - M.right);
  const y = (v) => H - M.bottom - (v / yMax) * (H - M.top - M.bottom);
  const grid = svg('g', { class: 'grid' });
  const axis = svg('g', { class: 'axis' });
  for (let i = 0; i <= 4; i++) {
    const v = (yMax * i) / 4;
    grid.append(svg('line', { x1: M.left, x2: W - M.right, y1: y(v), y2: y(v) }));
    axis.append(svg('text', { x: M.left - 6, y: y(v) + 3, 'text-anchor': 'end' }, yFormat(v)));
  }
  for (let i = 0; i <= 3; i++) {
    const t = x0 + (span * i) / 3;
    axis.append(
      svg(
        'text',
        { x: x(t), y: H - 6, 'text-anchor': i === 0 ? 'start' : i === 3 ? 'end' : 'middle' },
        hhmm(t, span < 900),
      ),
    );
  }
  const paths = [];
  for (const s of series) {
    const points = s.points.filter(([t]) => t >= x0);
    if (!points.length) continue;
    // Steps: a value holds until the next sample.
    let d = `M${x(points[0][0]).toFixed(1)},${y(points[0][1]).toFixed(1)}`;
    for (let i = 1; i < points.length; i++) {
      d += `H${x(points[i][0]).toFixed(1)}V${y(points[i][1]).toFixed(1)}`;
    }
    d += `H${x(now).toFixed(1)}`;
    if (area === true || area === s.cls) {
      paths.push(
        svg('path', { class: `area-${s.cls}`, d: `${d}V${y(0)}H${x(points[0][0]).toFixed(1)}Z` }),
      );
    }
    paths.push(svg('path', { class: `series-${s.cls}`, d }));
  }
  return svg(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': label },
    grid,
    axis,
    ...paths,
  );
}

export function renderCharts() {
  const samples = state.history.samples;
  const last = samples.length ? samples[samples.length - 1] : null;
  $('range').replaceChildren(
    ...RANGES.map(([seconds, text]) =>
      el('button', {
        type: 'button',
        'aria-pressed': String(state.range === seconds),
        text,
        onclick: () => {
          state.range = seconds;
          state.history.samples = [];
          window.dispatchEvent(new Event('berth:refresh'));
        },
      }),
    ),
  );
  for (const id of ['chart-queue', 'chart-allocated', 'chart-waits', 'chart-eta'])
    $(id).dataset.samples = samples.length;

  // Queue length.
  const pick = (key) => samples.map((sample) => [sample.time, sample[key]]);
  const peak = Math.max(0, ...samples.map((s) => Math.max(s.pending, s.running, s.held)));
  const queueLabel = last
    ? `Queue length ${rangeText()}: now ${last.pending} pending, ${last.running} running, ${last.held} held; peak ${peak}.`
    : 'No samples yet.';
  chartBody(
    'chart-queue',
    queueLabel,
    lineChart(
      [
        { cls: 'held', points: pick('held') },
        { cls: 'running', points: pick('running') },
        { cls: 'pending', points: pick('pending') },
      ],
      {
        yMax: niceMax(peak),
        yFormat: (v) => String(Math.round(v)),
        label: queueLabel,
        area: 'running',
      },
    ),
    el(
      'div',
      { class: 'keys' },
      ['pending', 'running', 'held'].map((key) =>
        el('span', {}, el('span', { class: `chip key-${key}`, 'aria-hidden': 'true' }), key),
      ),
    ),
  );

  // GPUs allocated: held by jobs, not how busy the jobs keep them (the
  // server has no measure of that; the agents' /metrics have NVML's).
  const allocated = samples.map((s) => [
    s.time,
    s.gpus_total ? (100 * s.gpus_allocated) / s.gpus_total : 0,
  ]);
  const mean = allocated.length
    ? allocated.reduce((sum, [, v]) => sum + v, 0) / allocated.length
    : 0;
  const allocatedLabel = last
    ? `GPUs allocated ${rangeText()}: now ${last.gpus_allocated} of ${last.gpus_total} GPUs (${pct(last)}), average ${Math.round(mean)}%.`
    : 'No samples yet.';
  chartBody(
    'chart-allocated',
    allocatedLabel,
    lineChart([{ cls: 'allocated', points: allocated }], {
      yMax: 100,
      yFormat: (v) => `${v}%`,
      label: allocatedLabel,
      area: true,
    }),
  );

  // Wait-time distribution.
  renderWaits(samples);
  renderEtaAccuracy();
}

// How the first ETAs turned out, since the server started: the share of
// first starts inside the first 80% interval given, and the share within a
// quarter of the promised wait or 10 minutes (the server's own judgement;
// /metrics has it as berth_eta_* with the errors' histogram).
function renderEtaAccuracy() {
  const accuracy = state.history.etaAccuracy;
  if (!accuracy || !accuracy.judged) {
    chartBody('chart-eta', 'No job has started since the server gave it an ETA.');
    return;
  }
  const share = accuracy.covered / accuracy.judged;
  const note =
    `${accuracy.covered} of ${accuracy.judged} job${accuracy.judged === 1 ? '' : 's'} ` +
    `(${Math.round(100 * share)}%) started inside the first 80% interval they were given; ` +
    `${accuracy.kept} (${Math.round((100 * accuracy.kept) / accuracy.judged)}%) within a ` +
    'quarter of the wait their first ETA promised, or 10 minutes.';
  const y = H - M.bottom;
  const plotW = W - M.left - M.right;
  const bar = svg('g', { class: 'coverage', 'data-coverage': share.toFixed(3) });
  bar.append(svg('title', {}, `${Math.round(100 * share)}% inside (aim: 80%)`));
  bar.append(svg('rect', { class: 'track', x: M.left, y: y - 24, width: plotW, height: 24, rx: 3 }));
  bar.append(
    svg('rect', {
      class: 'bar',
      x: M.left,
      y: y - 24,
      width: (plotW * share).toFixed(1),
      height: 24,
      rx: 3,
    }),
  );
  const aim = M.left + plotW * 0.8;
  bar.append(svg('line', { class: 'aim', x1: aim, x2: aim, y1: y - 32, y2: y + 4 }));
  bar.append(svg('text', { class: 'axis', x: aim, y: y + 16, 'text-anchor': 'middle' }, 'aim 80%'));
  chartBody(
    'chart-eta',
    note,
    svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `ETA accuracy: ${note}` }, bar),
  );
}

function pct(sample) {
  return sample.gpus_total
    ? `${Math.round((100 * sample.gpus_allocated) / sample.gpus_total)}%`
    : '0%';
}

// "since 14:05" (or since 14:05:10 for a short window).
function rangeText() {
  const [x0, now] = timeWindow();
  return `since ${hhmm(x0, now - x0 < 900)}`;
}

function chartBody(id, note, ...nodes) {
  $(id)
    .querySelector('.chart-body')
    .replaceChildren(el('div', { class: 'chart-note', text: note }), ...nodes);
}

function bucketName(seconds) {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${seconds / 60}m`;
  return `${seconds / 3600}h`;
}

function renderWaits(samples) {
  const bounds = state.history.bounds || [];
  const counts = new Array(bounds.length + 1).fill(0);
  let starts = 0;
  let sum = 0;
  let max = 0;
  for (const sample of samples) {
    sample.wait_buckets.forEach((n, i) => {
      counts[i] += n;
    });
    starts += sample.starts;
    sum += sample.wait_sum_s;
    max = Math.max(max, sample.wait_max_s);
  }
  // Show the buckets up to the largest wait seen (at least up to 5 min).
  let shown = Math.max(bounds.indexOf(300) + 1, 1);
  counts.forEach((n, i) => {
    if (n > 0) shown = Math.max(shown, i + 1);
  });
  const labels = counts
    .slice(0, shown)
    .map((_, i) =>
      i < bounds.length ? `≤${bucketName(bounds[i])}` : `>${bucketName(bounds[bounds.length - 1])}`,
    );
  const values = counts.slice(0, shown);
  const top = niceMax(Math.max(...values, 0));
  const plotW = W - M.left - M.right;
  const band = plotW / values.length;
  const y = (v) => H - M.bottom - (v / top) * (H - M.top - M.bottom);
  const grid = svg('g', { class: 'grid' });
  const axis = svg('g', { class: 'axis' });
  for (let i = 0; i <= 4; i++) {
    const v = (top * i) / 4;
    grid.append(svg('line', { x1: M.left, x2: W - M.right, y1: y(v), y2: y(v) }));
    axis.append(
      svg('text', { x: M.left - 6, y: y(v) + 3, 'text-anchor': 'end' }, String(Math.round(v))),
    );
  }
  const bars = values.map((n, i) => {
    const x = M.left + i * band + band * 0.15;
    const group = svg('g', { 'data-bucket': labels[i], 'data-count': n });
    group.append(svg('title', {}, `${labels[i]}: ${n} job${n === 1 ? '' : 's'}`));
    if (n > 0) {
      group.append(
        svg('rect', {
          class: 'bar',
          x: x.toFixed(1),
          y: y(n).toFixed(1),
          width: (band * 0.7).toFixed(1),
          height: (y(0) - y(n)).toFixed(1),
          rx: 2,
        }),
      );
      group.append(
        svg(
          'text',
          {
            class: 'bar-label',
            x: (x + band * 0.35).toFixed(1),
            y: (y(n) - 3).toFixed(1),
            'text-anchor': 'middle',
          },
          String(n),
        ),
      );
    }
    axis.append(
      svg(
        'text',
        { x: (M.left + i * band + band / 2).toFixed(1), y: H - 6, 'text-anchor': 'middle' },
        labels[i],
      ),
    );
    return group;
  });
  const note = starts
    ? `${starts} job${starts === 1 ? '' : 's'} started ${rangeText()}: mean wait ${duration(sum / starts)}, longest ${duration(max)}.`
    : `No job started ${rangeText()}.`;
  chartBody(
    'chart-waits',
    note,
    svg(
      'svg',
      { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `Wait before start: ${note}` },
      grid,
      axis,
      ...bars,
    ),
  );
}
