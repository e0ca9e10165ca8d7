// The token and the JSON API. A 401 anywhere forgets the token and fires
// `berth:unauthorized` on window (the app asks for a new one).

import { state } from './state.js';

const TOKEN_KEY = 'berth.token';
const MAX_JOB_PAGES = 5; // 5,000 live jobs

export const storage = {
  get() {
    try {
      return localStorage.getItem(TOKEN_KEY);
    } catch (e) {
      return null;
    }
  },
  set(value) {
    try {
      localStorage.setItem(TOKEN_KEY, value);
    } catch (e) {
      /* private mode */
    }
  },
  clear() {
    try {
      localStorage.removeItem(TOKEN_KEY);
    } catch (e) {
      /* private mode */
    }
  },
};

export function fragment() {
  return new URLSearchParams(location.hash.replace(/^#/, ''));
}

// Takes a token from the fragment, keeps it, and takes it out of the
// address bar (and so out of the history and of screenshots).
export function adoptFragmentToken() {
  const params = fragment();
  const token = params.get('token');
  if (!token) return;
  storage.set(token);
  state.token = token;
  params.delete('token');
  const rest = params.toString();
  history.replaceState(null, '', location.pathname + location.search + (rest ? `#${rest}` : ''));
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function call(path, options = {}) {
  const response = await fetch(path, {
    method: options.method || 'GET',
    headers: { Authorization: `Bearer ${state.token}` },
    cache: 'no-store',
  });
  if (response.status === 401) {
    storage.clear();
    window.dispatchEvent(new Event('berth:unauthorized'));
    throw new ApiError(401, 'unauthenticated', 'the token was not accepted');
  }
  return response;
}

export async function api(path, options) {
  const response = await call(path, options);
  const text = await response.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch (e) {
    body = null;
  }
  if (!response.ok) {
    const error = body && body.error ? body.error : {};
    throw new ApiError(
      response.status,
      error.code || 'http',
      error.message || `${path}: HTTP ${response.status}`,
    );
  }
  return body;
}

export async function liveJobs() {
  const jobs = [];
  let after = null;
  for (let page = 0; page < MAX_JOB_PAGES; page++) {
    const body = await api(`/api/v1/jobs?live=true&limit=1000${after ? `&after=${after}` : ''}`);
    jobs.push(...body.jobs);
    if (!body.next_after) break;
    after = body.next_after;
  }
  return jobs;
}

// Fetches only the samples newer than those held; drops the ones that
// fell out of the range.
export async function updateHistory() {
  const held = state.history.samples;
  const nowS = Math.floor(Date.now() / 1000);
  const since = held.length ? held[held.length - 1].time + 1 : nowS - state.range;
  const body = await api(`/api/v1/history?since=${since}`);
  const cutoff = nowS - state.range;
  state.history = {
    samples: held.concat(body.samples).filter((sample) => sample.time >= cutoff),
    interval: body.interval_s,
    bounds: body.wait_bounds_s,
    etaAccuracy: body.eta_accuracy,
  };
}
