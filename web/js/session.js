// The logged-in session, kept in localStorage so that a reload (or another
// tab) stays logged in: the player, both tokens and when the access token
// expires.
//
// A copy also goes to IndexedDB, for one reason: refresh tokens work once,
// so tabs take turns refreshing (under a Web Lock) and each must see the
// pair the previous one stored. localStorage may show another tab's write
// late; an IndexedDB transaction begun after another one committed sees it.

const KEY = 'uttt.session';
const DB = 'uttt';
const STORE = 'kv';

/** The stored session, or null. */
export function load() {
  try {
    return valid(JSON.parse(localStorage.getItem(KEY) || 'null'));
  } catch {
    return null;
  }
}

function valid(s) {
  return s && s.access_token && s.refresh_token ? s : null;
}

/** Stores `session` (or removes it when null); the IndexedDB copy is written too (awaitable). */
export function store(session) {
  if (session) localStorage.setItem(KEY, JSON.stringify(session));
  else localStorage.removeItem(KEY);
  return put(session).catch(() => {});
}

let opened = null;
function db() {
  if (!opened) {
    opened = new Promise((resolve, reject) => {
      const req = indexedDB.open(DB, 1);
      req.onupgradeneeded = () => req.result.createObjectStore(STORE);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  }
  return opened;
}

async function put(session) {
  if (!globalThis.indexedDB) return;
  const conn = await db();
  await new Promise((resolve, reject) => {
    const tx = conn.transaction(STORE, 'readwrite');
    tx.objectStore(STORE).put(session ?? null, KEY);
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

/**
 * The latest session as every tab sees it: the IndexedDB copy (null after a
 * log-out), or localStorage's where there is none.
 */
export async function loadLatest() {
  if (!globalThis.indexedDB) return load();
  try {
    const conn = await db();
    const value = await new Promise((resolve, reject) => {
      const req = conn.transaction(STORE, 'readonly').objectStore(STORE).get(KEY);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    return value === undefined ? load() : valid(value);
  } catch {
    return load();
  }
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
