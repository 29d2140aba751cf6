// The HTTP API of API.md, and nothing else: a fetch wrapper that sends the
// bearer token, refreshes it a minute before it expires (and once on a 401),
// and turns problem+json bodies into ApiError.

import * as session from './session.js';

const BASE = '/api/v1';
/** Refresh this long before the access token expires. */
const REFRESH_AHEAD_MS = 60_000;

/** An error answer of the API (or a network failure, status 0). */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
    this.code = problem.code || (status === 0 ? 'network' : `http_${status}`);
    this.title = problem.title || (status === 0 ? 'Network error' : `HTTP ${status}`);
    this.detail = problem.detail || '';
    this.fields = problem.errors || [];
  }
}

let current = session.load();
let refreshing = null;
let timer = null;
const listeners = new Set();

/** Calls `fn(player | null, reason)` whenever the session starts, ends or changes hands. */
export function onSessionChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** The logged-in player ({id, username, role}), or null. */
export function me() {
  return current?.player ?? null;
}

/** The access token (for event streams, which cannot send headers). */
export function accessToken() {
  return current?.access_token ?? null;
}

/** Takes `next` as the session; answers once every tab can see it. */
function setSession(next, reason) {
  const before = current?.player?.id ?? null;
  current = next;
  const stored = session.store(next);
  schedule();
  if ((next?.player?.id ?? null) !== before || !next) {
    for (const fn of listeners) fn(me(), reason);
  }
  return stored;
}

/** Follows a session another tab made (or ended). */
function adopt(stored) {
  const before = current?.player?.id ?? null;
  current = stored;
  schedule();
  if ((stored?.player?.id ?? null) !== before) {
    for (const fn of listeners) fn(me(), stored ? 'other-tab' : 'logged-out');
  }
}

function schedule() {
  clearTimeout(timer);
  if (!current) return;
  const wait = Math.max(1000, current.expires_at - Date.now() - REFRESH_AHEAD_MS);
  timer = setTimeout(() => refresh().catch(() => {}), wait);
}

// Another tab refreshed, logged in or logged out: follow it.
session.onOtherTab(adopt);

document.addEventListener('visibilitychange', () => {
  // Timers sleep in background tabs: catch up when the page shows again.
  if (!document.hidden && current && current.expires_at - Date.now() < REFRESH_AHEAD_MS) {
    refresh().catch(() => {});
  }
});

schedule();

async function problemOf(res) {
  let body = {};
  try {
    body = await res.json();
  } catch {
    body = { title: res.statusText || `HTTP ${res.status}` };
  }
  if (res.status === 429) {
    const after = res.headers.get('Retry-After');
    if (after && !body.detail) body.detail = `try again in ${after} s`;
  }
  return new ApiError(res.status, body);
}

async function send(method, path, body, token) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  try {
    return await fetch(BASE + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, { title: 'Network error', detail: 'the server cannot be reached' });
  }
}

/**
 * Exchanges the refresh token for a new pair. Refresh tokens work once, and
 * reusing one ends the session everywhere, so tabs take turns under a Web
 * Lock and always start from the latest pair: one that is not due yet (and
 * is not the access token the server just `rejected`) is taken as it is,
 * and a new pair is stored before the lock is let go.
 */
export function refresh(rejected = null) {
  if (!refreshing) {
    const run = async () => {
      const latest = await session.loadLatest();
      if (!latest) {
        adopt(null);
        throw new ApiError(401, { code: 'unauthorized', title: 'Not logged in' });
      }
      const due = latest.expires_at - Date.now() <= REFRESH_AHEAD_MS;
      if (!due && latest.access_token !== rejected) {
        if (latest.access_token !== current?.access_token) adopt(latest);
        return;
      }
      const res = await send('POST', '/auth/refresh', { refresh_token: latest.refresh_token });
      if (!res.ok) {
        const err = await problemOf(res);
        if (res.status === 401) await setSession(null, 'expired');
        throw err;
      }
      await setSession(session.fromBody(await res.json(), latest));
    };
    const locked = navigator.locks ? navigator.locks.request('uttt-refresh', run) : run();
    refreshing = locked.finally(() => { refreshing = null; });
  }
  return refreshing;
}

/** A fresh access token (refreshed first when it is about to expire). */
export async function freshToken() {
  if (current && current.expires_at - Date.now() < 10_000) await refresh();
  return accessToken();
}

/**
 * Calls the API: `method` and `path` under /api/v1, an optional JSON body.
 * Answers the parsed JSON (null for 204 and 304); throws ApiError.
 */
export async function call(method, path, body, { auth = true } = {}) {
  let token = auth ? await freshToken() : null;
  let res = await send(method, path, body, token);
  if (res.status === 401 && auth && current) {
    await refresh(token);
    token = accessToken();
    res = await send(method, path, body, token);
  }
  if (!res.ok) throw await problemOf(res);
  if (res.status === 204) return null;
  const type = res.headers.get('Content-Type') || '';
  return type.includes('json') ? res.json() : res.text();
}

export const get = (path) => call('GET', path);
export const post = (path, body = {}) => call('POST', path, body);
export const del = (path) => call('DELETE', path);

/** Registers and logs in. */
export async function register(username, password) {
  const body = await call('POST', '/auth/register', { username, password }, { auth: false });
  await setSession(session.fromBody(body), 'login');
  return body.player;
}

/** Logs in. */
export async function login(username, password) {
  const body = await call('POST', '/auth/login', { username, password }, { auth: false });
  await setSession(session.fromBody(body), 'login');
  return body.player;
}

/**
 * Ends the session on the server, then here. The server is told first and
 * answers before the session is dropped, so once this resolves no refresh
 * token of the session works any more. It runs under the refresh lock with
 * the latest pair: a tab refreshing meanwhile would otherwise spend the
 * token being logged out and leave its successor alive.
 */
export async function logout() {
  const run = async () => {
    const latest = (await session.loadLatest()) ?? current;
    const token = latest?.refresh_token;
    if (token) {
      try {
        await call('POST', '/auth/logout', { refresh_token: token }, { auth: false });
      } catch {
        // Unreachable server: the session still ends here.
      }
    }
    await setSession(null, 'logged-out');
  };
  if (navigator.locks) return navigator.locks.request('uttt-refresh', run);
  await refreshing?.catch(() => {});
  return run();
}

/** An EventSource on `path` (under /api/v1) with the token in the query, as API.md allows. */
export async function events(path) {
  const token = await freshToken();
  const sep = path.includes('?') ? '&' : '?';
  return new EventSource(`${BASE}${path}${sep}access_token=${encodeURIComponent(token)}`);
}

/** Path segment escaping. */
export const seg = encodeURIComponent;
