// What the page knows: the last answers of the API, the user's choices and
// the open job. Modules read and write this one object.

export const RUNNING = new Set(['starting', 'running', 'completing']);

export const state = {
  token: null,
  me: null,
  nodes: [],
  jobs: [],
  jobsById: new Map(),
  history: { samples: [], interval: 5, bounds: [] },
  range: 3600,
  filter: 'all',
  timer: null,
  detail: null, // {id, job, explanation, log: {...}}
};
