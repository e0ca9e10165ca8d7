// The summary bar and the cluster view: a card per node, a cell per GPU,
// colored by the job holding it and labelled with its id.

import { RUNNING, state } from './state.js';
import { $, colorClass, el, openJob, parseTime, relative } from './util.js';

export function renderSummary() {
  let total = 0;
  let busy = 0;
  let up = 0;
  let unhealthy = 0;
  for (const node of state.nodes) {
    if (node.state !== 'down') up++;
    for (const gpu of node.gpus) {
      if (node.state === 'down') continue;
      total++;
      if (gpu.job !== null) busy++;
      if (!gpu.healthy) unhealthy++;
    }
  }
  const count = (test) => state.jobs.filter(test).length;
  const items = [
    ['Nodes up', `${up} / ${state.nodes.length}`],
    ['GPUs in use', `${busy} / ${total}${total ? ` (${Math.round((100 * busy) / total)}%)` : ''}`],
    ['Pending', count((job) => job.state === 'pending')],
    ['Running', count((job) => RUNNING.has(job.state))],
    ['Held', count((job) => job.state === 'held')],
  ];
  if (unhealthy) items.push(['Unhealthy GPUs', unhealthy]);
  $('summary').replaceChildren(
    ...items.map(([label, value]) =>
      el(
        'div',
        { 'data-summary': label.toLowerCase().replace(/ /g, '-') },
        el('dt', { text: label }),
        el('dd', { text: value }),
      ),
    ),
  );
}

export function renderCluster() {
  const nodes = [...state.nodes].sort((a, b) =>
    a.name.localeCompare(b.name, undefined, { numeric: true }),
  );
  if (!nodes.length) {
    $('nodes').replaceChildren(
      el('p', {
        class: 'empty',
        text: 'No nodes yet: start an agent (berth agent, or berth dev --nodes N).',
      }),
    );
    return;
  }
  $('nodes').replaceChildren(...nodes.map(renderNode));
}

function renderNode(node) {
  const busy = node.gpus.filter((gpu) => gpu.job !== null).length;
  const beat = parseTime(node.last_heartbeat);
  const meta = [node.gpu_type || 'GPUs', `${node.gpus.length} GPUs`, `${busy} busy`];
  if (beat) meta.push(`heartbeat ${relative(beat)}`);
  return el(
    'article',
    {
      class: 'node',
      'data-node': node.name,
      'data-state': node.state,
      'aria-label': `node ${node.name}, ${node.state}`,
    },
    el(
      'div',
      { class: 'node-head' },
      el('span', { class: 'node-name', text: node.name }),
      el('span', { class: 'badge', 'data-state': node.state, text: node.state }),
    ),
    el('div', { class: 'node-meta', text: meta.join(' · ') }),
    el(
      'div',
      { class: 'gpus' },
      node.gpus.map((gpu) => renderGpu(node, gpu)),
    ),
  );
}

function renderGpu(node, gpu) {
  const where = `${node.name}/${gpu.index}`;
  const common = { 'data-gpu': where, 'data-group': gpu.group };
  if (!gpu.healthy) {
    return el(
      'div',
      {
        ...common,
        class: 'gpu',
        'data-state': 'unhealthy',
        'data-job': gpu.job,
        title: `${where}: unhealthy`,
      },
      el('span', { class: 'gpu-index', text: `GPU ${gpu.index}` }),
      el('span', { class: 'gpu-label', text: gpu.job !== null ? `✕ #${gpu.job}` : '✕ bad' }),
    );
  }
  if (gpu.job === null) {
    return el(
      'div',
      { ...common, class: 'gpu', 'data-state': 'free', title: `${where}: free` },
      el('span', { class: 'gpu-index', text: `GPU ${gpu.index}` }),
      el('span', { class: 'gpu-label', text: 'free' }),
    );
  }
  const job = state.jobsById.get(gpu.job);
  const who = job ? ` · ${job.user}${job.name ? ` · ${job.name}` : ''} · ${job.state}` : '';
  return el(
    'button',
    {
      ...common,
      type: 'button',
      class: `gpu ${colorClass(gpu.job)}`,
      'data-state': 'busy',
      'data-job': gpu.job,
      title: `${where}: job ${gpu.job}${who}`,
      'aria-label': `${where} held by job ${gpu.job}${who}`,
      onclick: () => openJob(gpu.job),
      onmouseenter: () => highlight(gpu.job, true),
      onmouseleave: () => highlight(gpu.job, false),
      onfocus: () => highlight(gpu.job, true),
      onblur: () => highlight(gpu.job, false),
    },
    el('span', { class: 'gpu-index', text: `GPU ${gpu.index}` }),
    el('span', { class: 'gpu-label', text: `#${gpu.job}` }),
  );
}

// Hovering a GPU lights up the job's other GPUs and its queue row.
function highlight(id, on) {
  const selector = `.gpu[data-job="${Number(id)}"], tr[data-job="${Number(id)}"]`;
  for (const node of document.querySelectorAll(selector)) {
    node.classList.toggle(node.tagName === 'TR' ? 'selected' : 'highlight', on);
  }
}
