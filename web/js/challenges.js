// Challenges (API.md, "Challenges and bots"): a form to challenge a named
// player, the challenges you sent (cancel them), and the ones you receive as
// notices with Accept / Decline, from the player's own event stream
// (/me/events) for as long as you are logged in. Other screens listen to
// that same stream through `onEvent` (one stream per tab). Also the "bot"
// badge shown wherever a player's name appears.

import * as api from './api.js';
import { depthText, field, formError, h, notice, replace, select, showError, timeControlText } from './dom.js';
import { TIME_CONTROLS } from './lobby.js';

const DEPTHS = [[1, '1 · tic-tac-toe'], [2, '2 · ultimate'], [3, '3 · advanced'], [4, '4 · deep']];
/** How often a sent challenge is re-read, in case its event is missed. */
const POLL_MS = 3000;

/** A "bot" badge for a player that is a bot account, else null. */
export function botBadge(player) {
  return player?.bot
    ? h('span', { class: 'badge bot', title: 'A program plays this account' }, 'bot')
    : null;
}

/** What a challenge is about, in words. */
function terms(c) {
  const rated = c.rated ? `rated on ${c.ladder}` : 'casual';
  return `${depthText(c.depth)} · ${timeControlText(c.time_control)} · ${rated}`;
}

let go = () => {};
let stream = null;
let retry = null;
/** Incoming challenge id → its notice element. */
const incoming = new Map();
/** Outgoing challenge id → function called with each newer view of it. */
const outgoing = new Map();
/** Event name → functions called with each event's data (see `onEvent`). */
const handlers = new Map();

/** Passes the stream's events called `name` to their handlers. */
function wire(es, name) {
  es.addEventListener(name, (e) => {
    let data;
    try {
      data = JSON.parse(e.data);
    } catch {
      return;
    }
    for (const fn of handlers.get(name) ?? []) fn(data);
  });
}

/**
 * Calls `fn(data)` for each event `name` on the player's own stream
 * (/me/events) while logged in; answers the function that stops it.
 */
export function onEvent(name, fn) {
  if (!handlers.has(name)) {
    handlers.set(name, new Set());
    if (stream) wire(stream, name);
  }
  handlers.get(name).add(fn);
  return () => handlers.get(name)?.delete(fn);
}

/** Starts listening for challenges (after logging in); `navigate` opens a route. */
export function start(navigate) {
  go = navigate;
  if (!stream) connect();
}

/** Stops listening and clears the notices (after logging out). */
export function stop() {
  clearTimeout(retry);
  retry = null;
  stream?.close();
  stream = null;
  for (const el of incoming.values()) el.remove();
  incoming.clear();
  outgoing.clear();
}

async function connect() {
  if (!api.me()) return;
  let es;
  try {
    es = await api.events('/me/events');
  } catch {
    retry = setTimeout(connect, 5000);
    return;
  }
  if (!api.me()) { es.close(); return; }
  stream?.close();
  stream = es;
  const data = (e) => JSON.parse(e.data);
  for (const name of handlers.keys()) wire(es, name);
  es.addEventListener('challenge', (e) => showIncoming(data(e)));
  for (const name of ['challenge_cancelled', 'challenge_expired']) {
    es.addEventListener(name, (e) => closed(data(e)));
  }
  es.addEventListener('challenge_declined', (e) => closed(data(e)));
  es.addEventListener('challenge_accepted', (e) => {
    const d = data(e);
    closed({ id: d.challenge_id ?? d.id, status: 'accepted', match_id: d.match_id });
  });
  es.onopen = catchUp;
  es.onerror = () => {
    // The stream ends with its access token; reopen it with a fresh one.
    if (es.readyState === EventSource.CLOSED && stream === es) {
      stream = null;
      retry = setTimeout(connect, 3000);
    }
  };
}

/** Shows the incoming challenges that arrived while no stream was open. */
async function catchUp() {
  try {
    const mine = await api.get('/me/challenges');
    for (const c of mine.incoming) showIncoming(c);
    for (const c of mine.outgoing) outgoing.get(c.id)?.(c);
  } catch {
    // The next event or reconnection tries again.
  }
}

/** A challenge ended (or was accepted): update whoever shows it. */
function closed(c) {
  const el = incoming.get(c.id);
  if (el) {
    el.remove();
    incoming.delete(c.id);
    if (c.status === 'cancelled') notice('A challenge was withdrawn.');
  }
  outgoing.get(c.id)?.(c);
}

function showIncoming(c) {
  const me = api.me();
  if (!me || c.challenged.id !== me.id || c.status !== 'pending' || incoming.has(c.id)) return;
  const area = document.getElementById('notices');
  if (!area) return;
  const buttons = h('span', { class: 'notice-actions' },
    h('button', { type: 'button', class: 'primary', onclick: () => answer(c, 'accept') }, 'Accept'),
    h('button', { type: 'button', class: 'secondary', onclick: () => answer(c, 'decline') }, 'Decline'));
  const el = h('div', { class: 'notice challenge-notice', role: 'alertdialog', 'aria-label': `Challenge from ${c.challenger.username}`, dataset: { challenge: c.id } },
    h('span', {}, h('strong', {}, c.challenger.username), botBadge(c.challenger), ` challenges you: ${terms(c)}`,
      c.seat !== 'random' ? ` · you play ${c.seat === 'x' ? 'O' : 'X'}` : ''),
    buttons);
  incoming.set(c.id, el);
  area.append(el);
}

async function answer(c, what) {
  const el = incoming.get(c.id);
  incoming.delete(c.id);
  el?.remove();
  try {
    if (what === 'accept') {
      const { match_id: matchId } = await api.post(`/challenges/${api.seg(c.id)}/accept`);
      go(`#/match/${matchId}`);
    } else {
      await api.post(`/challenges/${api.seg(c.id)}/decline`);
    }
  } catch (err) {
    showError(err);
  }
}

/**
 * A form challenging `player` ({username, bot}): depth, time control, seat,
 * and a ladder to play a rated match on (its depth and time control then
 * apply). `ladder` is the one to preselect. After sending, it shows the
 * challenge until it is answered, with a button to cancel it.
 */
export function challengeForm(player, ladders, ladder = '') {
  const box = h('div', { class: 'challenge' });
  const ladderSelect = select('ladder', [['', 'None (casual)'], ...ladders.map((l) => [l.id, l.name])], ladder);
  const settings = h('div', { class: 'stack' },
    field('Board depth', select('depth', DEPTHS, 2)),
    field('Time control', select('time_control', TIME_CONTROLS.map(([id, label]) => [id, label]), 'clock-10')));
  const form = h('form', { class: 'stack challenge-form', 'aria-label': `Challenge ${player.username}` },
    field('Rated on', ladderSelect),
    settings,
    field('You play', select('seat', [['random', 'Random'], ['x', 'X (moves first)'], ['o', 'O']], 'random')),
    h('p', { class: 'form-error', role: 'alert' }),
    h('button', { type: 'submit', class: 'primary' }, `Challenge ${player.username}`));
  // A ladder's own depth and time control apply: the fields would only mislead.
  const sync = () => { settings.hidden = Boolean(ladderSelect.value); };
  ladderSelect.addEventListener('change', sync);
  sync();
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const body = { username: player.username, seat: data.get('seat') };
    if (data.get('ladder')) body.ladder = data.get('ladder');
    else {
      body.depth = Number(data.get('depth'));
      body.time_control = TIME_CONTROLS.find(([id]) => id === data.get('time_control'))[2];
    }
    formError(form, null);
    try {
      const c = await api.post('/challenges', body);
      replace(box, pending(c, () => replace(box, form)));
    } catch (err) {
      formError(form, err);
    }
  });
  return replace(box, form);
}

/** A sent challenge, waiting for its answer; `again` brings the form back. */
function pending(c, again) {
  const status = h('p', { class: 'challenge-status', role: 'status', dataset: { status: 'pending' } },
    `Waiting for ${c.challenged.username} to answer (${terms(c)})…`);
  const actions = h('div', { class: 'actions' });
  const el = h('div', { class: 'card notice-inline challenge-sent', dataset: { challenge: c.id } }, status, actions);
  let timer = null;
  const finish = () => {
    outgoing.delete(c.id);
    clearInterval(timer);
  };
  const update = (view) => {
    if (!el.isConnected) return finish();
    if (view.status === 'pending') return;
    finish();
    status.dataset.status = view.status;
    if (view.status === 'accepted' && view.match_id) {
      go(`#/match/${view.match_id}`);
      return;
    }
    const reason = view.decline_reason ? `: “${view.decline_reason}”` : '';
    status.textContent = {
      declined: `${c.challenged.username} declined${reason}.`,
      expired: 'Nobody answered in time.',
      cancelled: 'Challenge withdrawn.',
    }[view.status] ?? view.status;
    replace(actions, h('button', { type: 'button', class: 'secondary', onclick: again }, 'Challenge again'));
  };
  outgoing.set(c.id, update);
  timer = setInterval(async () => {
    try {
      update(await api.get(`/challenges/${api.seg(c.id)}`));
    } catch {
      // The next poll or event tells.
    }
  }, POLL_MS);
  replace(actions, h('button', {
    type: 'button',
    class: 'secondary',
    onclick: async () => {
      try {
        update(await api.post(`/challenges/${api.seg(c.id)}/cancel`));
      } catch (err) {
        if (err.code === 'challenge_not_pending') update(await api.get(`/challenges/${api.seg(c.id)}`));
        else showError(err);
      }
    },
  }, 'Cancel the challenge'));
  return el;
}
