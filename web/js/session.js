// The logged-in session, kept in localStorage so that a reload (or another
// tab) stays logged in: the player, both tokens and when the access token
// expires.

const KEY = 'uttt.session';

/** The stored session, or null. */
export function load() {
  try {
    const s = JSON.parse(localStorage.getItem(KEY) || 'null');
    return s && s.access_token && s.refresh_token ? s : null;
  } catch {
    return null;
  }
}

/** Stores `session` (or removes it when null). */
export function store(session) {
  if (session) localStorage.setItem(KEY, JSON.stringify(session));
  else localStorage.removeItem(KEY);
}

/** A session from the body of register, login or refresh. */
export function fromBody(body, previous) {
  return {
    player: body.player ?? previous?.player ?? null,
    access_token: body.access_token,
    refresh_token: body.refresh_token,
    expires_at: Date.now() + body.expires_in * 1000,
  };
}

/** Calls `fn(session)` when another tab changes or ends the session. */
export function onOtherTab(fn) {
  window.addEventListener('storage', (e) => {
    if (e.key === KEY || e.key === null) fn(load());
  });
}
