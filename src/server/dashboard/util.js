// DOM building and formatting helpers: no state, no requests.

const SVG_NS = 'http://www.w3.org/2000/svg';

export const $ = (id) => document.getElementById(id);

// el('td', {class: 'x', 'data-job': 3, text: 'hi'}, child...)
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

export function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function setAttrs(node, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'text') node.textContent = String(value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
}

export function parseTime(text) {
  if (!text) return null;
  // Microsecond fractions: keep milliseconds, which every engine parses.
  const ms = Date.parse(String(text).replace(/(\.\d{3})\d+/, '$1'));
  return Number.isNaN(ms) ? null : ms;
}

export function duration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  let s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  return `${m}m ${s}s`;
}

export function clock(ms) {
  const date = new Date(ms);
  const time = date.toLocaleTimeString([], {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
  });
  if (new Date().toDateString() === date.toDateString()) return time;
  return `${date.toLocaleDateString([], { month: 'short', day: 'numeric' })} ${time}`;
}

// "14:05" (another day: "Dec 6 14:05"), local time.
export function shortClock(ms) {
  const date = new Date(ms);
  const time = date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hour12: false });
  if (new Date().toDateString() === date.toDateString()) return time;
  return `${date.toLocaleDateString([], { month: 'short', day: 'numeric' })} ${time}`;
}

// An ETA in the one format Berth uses everywhere (issue 30): "expected
// 14:05, 80%: 13:50-14:40", from a job's or an explanation's eta, eta_low
// and eta_high; null without an ETA.
export function etaText(fields) {
  const eta = parseTime(fields.eta);
  if (eta === null) return null;
  const low = parseTime(fields.eta_low);
  const high = parseTime(fields.eta_high);
  const interval =
    low !== null && high !== null ? `, 80%: ${shortClock(low)}-${shortClock(high)}` : '';
  return `expected ${shortClock(eta)}${interval}`;
}

// Server sentences carry RFC 3339 UTC times; show them as local clock times.
export function localTimes(text) {
  return String(text).replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, (match) => {
    const ms = parseTime(match);
    return ms === null ? match : clock(ms);
  });
}

export function relative(ms) {
  const seconds = (ms - Date.now()) / 1000;
  return seconds >= 0 ? `in ${duration(seconds)}` : `${duration(-seconds)} ago`;
}

export function gpusPerTask(job) {
  if (job.gpus !== null && job.gpus !== undefined) return job.gpus;
  return (job.gpu_milli || 0) / 1000;
}

// A job whose tasks have shares of their own (a Slurm job's nodes, 5 + 1
// GPUs): each task's GPUs, task 0 first; null when every task has the same.
export function gpusOfEachTask(job) {
  return Array.isArray(job.task_shapes) ? job.task_shapes.map((shape) => shape.gpus) : null;
}

export function gpuAsk(job) {
  const per = gpusPerTask(job);
  const kind = job.gpu_type ? ` ${job.gpu_type}` : '';
  const each = gpusOfEachTask(job);
  if (each) return `${each.join(' + ')}${kind} GPUs on ${job.tasks} nodes`;
  const one = per === 1 ? `1${kind} GPU` : `${per}${kind} GPUs`;
  return job.tasks > 1 ? `${job.tasks} tasks × ${one}` : one;
}

export function colorClass(id) {
  return `job-c${Number(id) % 12}`;
}

export function showProblem(message) {
  $('problem').hidden = !message;
  $('problem').textContent = message || '';
}

export function openJob(id) {
  location.hash = `job=${id}`;
}
