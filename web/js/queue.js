// Waiting in a ranked queue: the ticket's rating window, wait time and queue
// size, read every two seconds (which also keeps the ticket alive); the
// pairing arrives as `match_found` on /me/events or in the ticket.

import * as api from './api.js';
import { duration, h, replace, showError } from './dom.js';
import { startQueue } from './lobby.js';

const POLL_MS = 2000;

/** Mounts the ticket `id` into `root`. */
export function mount(root, id, go) {
  const parts = {
    ladder: h('span', {}, '…'),
    status: h('strong', { class: 'ticket-status', dataset: { status: 'queued' } }, 'queued'),
    window: h('span', { class: 'ticket-window' }, '…'),
    waited: h('span', { class: 'ticket-waited' }, '0 s'),
    size: h('span', { class: 'ticket-size' }, '…'),
    rating: h('span', {}, '…'),
    actions: h('div', { class: 'actions' }),
  };
  replace(root, h('section', { class: 'screen queue card', 'aria-live': 'polite' },
    h('h1', {}, 'Looking for an opponent'),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Ladder'), h('dd', {}, parts.ladder),
      h('dt', {}, 'Status'), h('dd', {}, parts.status),
      h('dt', {}, 'Your rating'), h('dd', {}, parts.rating),
      h('dt', {}, 'Rating window'), h('dd', {}, parts.window),
      h('dt', {}, 'Waiting for'), h('dd', {}, parts.waited),
      h('dt', {}, 'Players in the queue'), h('dd', {}, parts.size)),
    parts.actions));

  let stopped = false;
  let timer = null;
  let es = null;
  let ticket = null;
  let seenAt = Date.now();

  const done = (matchId) => {
    if (stopped) return;
    stopped = true;
    go(`#/match/${matchId}`);
  };

  let ladderNames = {};
  api.get('/ladders').then((list) => {
    ladderNames = Object.fromEntries(list.map((l) => [l.id, l.name]));
    if (ticket) parts.ladder.textContent = ladderNames[ticket.ladder] ?? ticket.ladder;
  }).catch(() => {});

  const show = (t) => {
    ticket = t;
    seenAt = Date.now();
    parts.ladder.textContent = ladderNames[t.ladder] ?? t.ladder;
    parts.status.textContent = t.status + (t.reason ? ` (${t.reason})` : '');
    parts.status.dataset.status = t.status;
    parts.rating.textContent = String(Math.round(t.rating));
    parts.window.textContent = t.status !== 'queued' ? '–'
      : t.window === null || t.window === undefined ? 'anyone on the ladder' : `± ${Math.round(t.window)}`;
    parts.size.textContent = String(t.queue_size);
    parts.waited.textContent = duration(t.waited_ms);
    if (t.status === 'queued') {
      replace(parts.actions, h('button', { type: 'button', class: 'secondary', onclick: cancel }, 'Leave the queue'));
    } else if (t.status === 'cancelled') {
      replace(parts.actions,
        h('button', { type: 'button', class: 'primary', onclick: () => startQueue(t.ladder, go).catch(showError) }, 'Queue again'),
        h('a', { class: 'button secondary', href: '#/' }, 'Lobby'));
    }
  };

  const cancel = async () => {
    try {
      await api.del(`/matchmaking/tickets/${api.seg(id)}`);
      stopped = true;
      go('#/');
    } catch (err) {
      if (err.code === 'already_matched' && err.problem.match_id) done(err.problem.match_id);
      else showError(err);
    }
  };

  const poll = async () => {
    if (stopped) return;
    try {
      const t = await api.get(`/matchmaking/tickets/${api.seg(id)}`);
      if (t.status === 'matched' && t.match_id) return done(t.match_id);
      show(t);
      if (t.status !== 'queued') return;
    } catch (err) {
      if (stopped) return;
      if (err.status === 404) {
        replace(root, h('section', { class: 'screen card' }, h('h1', {}, 'No such ticket'), h('a', { href: '#/' }, 'Back to the lobby')));
        return;
      }
      showError(err);
    }
    timer = setTimeout(poll, POLL_MS);
  };

  const tick = setInterval(() => {
    if (ticket?.status === 'queued') parts.waited.textContent = duration(ticket.waited_ms + Date.now() - seenAt);
  }, 1000);

  api.events('/me/events').then((source) => {
    if (stopped) { source.close(); return; }
    es = source;
    es.addEventListener('match_found', (e) => {
      try {
        const data = JSON.parse(e.data);
        if (!data.ticket_id || data.ticket_id === id) done(data.match_id);
      } catch {
        poll();
      }
    });
    es.addEventListener('resync', () => poll());
  }).catch(() => {});

  poll();
  return () => {
    stopped = true;
    clearTimeout(timer);
    clearInterval(tick);
    es?.close();
  };
}
