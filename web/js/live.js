// Following a record's event stream (a match's `state`, a tournament's
// `tournament`): each event's data to the screen, a "live" indicator, and
// when the stream is lost, the record read again and the stream reopened
// (with a fresh token) after a growing pause.

import * as api from './api.js';
import { h } from './dom.js';

const TEXT = { live: 'live', connecting: 'connecting…', reconnecting: 'reconnecting…', closed: 'not live' };
/** The longest pause between reconnections. */
const MAX_RETRY_MS = 10_000;

/** The "live" indicator: its element, and `set('live' | 'connecting' | 'reconnecting' | 'closed')`. */
export function indicator() {
  const el = h('span', { class: 'live', dataset: { live: 'connecting' } }, TEXT.connecting);
  return {
    el,
    set(what) {
      el.dataset.live = what;
      el.textContent = TEXT[what];
    },
  };
}

/**
 * Follows the stream at `path` (under /api/v1): `onData(data)` for each
 * event named `event`; `onError()` whenever the stream errs; `reread()`
 * reads the record before reconnecting (a 403 or 404 ends the following);
 * `live` is an indicator. Answers `{close(), open}`.
 */
export function follow({ path, event, onData, reread, onError = () => {}, live }) {
  let es = null;
  let closed = false;
  let timer = null;
  let retry = 1000;
  const connect = async () => {
    if (closed) return;
    es?.close();
    const next = await api.events(path);
    if (closed) {
      next.close();
      return;
    }
    es = next;
    next.addEventListener(event, (e) => {
      try {
        onData(JSON.parse(e.data));
      } catch (err) {
        console.warn(`bad ${event} event`, err);
      }
    });
    next.onopen = () => {
      retry = 1000;
      live.set('live');
    };
    next.onerror = () => {
      onError();
      live.set('reconnecting');
      if (next.readyState !== EventSource.CLOSED) return;
      clearTimeout(timer);
      timer = setTimeout(async () => {
        try {
          await reread();
        } catch (err) {
          if (err.status === 404 || err.status === 403) return live.set('closed');
        }
        connect();
      }, retry);
      retry = Math.min(retry * 2, MAX_RETRY_MS);
    };
  };
  connect();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      es?.close();
    },
    get open() {
      return es?.readyState === EventSource.OPEN;
    },
  };
}
