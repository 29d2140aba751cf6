// The lobby: matches to rejoin, practice against the CPU, rooms with a
// six-character code, and ranked queues on the ladders.

import * as api from './api.js';
import { depthText, field, formError, h, replace, select, showError, timeControlText } from './dom.js';

/** Time controls offered for practice and rooms: [id, label, body]. */
export const TIME_CONTROLS = [
  ['none', 'No time limit', { kind: 'none' }],
  ['clock-3', '3 minutes each', { kind: 'clock', initial_ms: 180_000, increment_ms: 0 }],
  ['clock-5-3', '5 minutes + 3 s a move', { kind: 'clock', initial_ms: 300_000, increment_ms: 3000 }],
  ['clock-10', '10 minutes each (tournament)', { kind: 'clock', initial_ms: 600_000, increment_ms: 0 }],
  ['turn-30', '30 seconds a turn', { kind: 'per_turn', turn_ms: 30_000 }],
  ['turn-60', '60 seconds a turn', { kind: 'per_turn', turn_ms: 60_000 }],
];
/** Board depths offered: [depth, label]. */
export const DEPTHS = [
  [1, '1 · tic-tac-toe'],
  [2, '2 · ultimate (9×9)'],
  [3, '3 · advanced (27×27)'],
  [4, '4 · deep (81×81)'],
];
const LEVELS = [[1, '1 · beginner'], [2, '2'], [3, '3'], [4, '4'], [5, '5 · strongest']];
const PRACTICE_KEY = 'uttt.practice';

function timeControlId(tc) {
  const found = TIME_CONTROLS.find(([, , body]) => JSON.stringify(body) === JSON.stringify(tc));
  return found ? found[0] : 'none';
}

function savedPractice() {
  try {
    return { depth: 2, cpu_level: 1, tc: 'none', seat: 'x', ...JSON.parse(localStorage.getItem(PRACTICE_KEY) || '{}') };
  } catch {
    return { depth: 2, cpu_level: 1, tc: 'none', seat: 'x' };
  }
}

/** Starts a practice match against the CPU and goes to it. */
export async function startPractice(settings, go) {
  localStorage.setItem(PRACTICE_KEY, JSON.stringify({
    depth: settings.depth,
    cpu_level: settings.cpu_level,
    tc: timeControlId(settings.time_control),
    seat: settings.seat,
  }));
  const state = await api.post('/matches', { opponent: 'cpu', ...settings });
  go(`#/match/${state.id}`);
}

/** Queues on `ladder` and goes to the ticket's screen (or to the match that prevents it). */
export async function startQueue(ladder, go) {
  try {
    const ticket = await api.post('/matchmaking/tickets', { ladder });
    go(`#/queue/${ticket.id}`);
  } catch (err) {
    if (err.code === 'already_queued' && err.problem.ticket_id) go(`#/queue/${err.problem.ticket_id}`);
    else if (err.code === 'in_active_match' && err.problem.match_id) {
      showError(err);
      go(`#/match/${err.problem.match_id}`);
    } else throw err;
  }
}

/** Mounts the lobby into `root`. */
export function mount(root, go) {
  const active = h('div', { class: 'active-matches' });
  const ranked = h('div', {}, h('p', { class: 'muted' }, 'Loading the ladders…'));
  replace(root, h('section', { class: 'screen lobby' },
    h('h1', { class: 'visually-hidden' }, 'Lobby'),
    active,
    h('div', { class: 'cards' },
      practiceCard(go),
      roomCard(go),
      h('div', { class: 'card' }, h('h2', {}, 'Ranked'), ranked))));
  loadActive(active);
  loadLadders(ranked, go);
  return () => {};
}

async function loadActive(box) {
  try {
    const page = await api.get('/me/matches?status=active&limit=20');
    if (!page.items.length) return;
    replace(box, h('div', { class: 'card resume' },
      h('h2', {}, 'Matches in progress'),
      h('ul', { class: 'plain' }, page.items.map((mt) => {
        const mode = { practice: 'Practice vs CPU', casual: 'Room', ranked: 'Ranked', tournament: 'Tournament' }[mt.mode] ?? mt.mode;
        const yours = mt.turn && mt.turn === mt.seat ? ' · your move' : '';
        return h('li', {},
          h('a', { class: 'button primary', href: `#/match/${mt.id}` }, 'Resume'),
          ` ${mode} · ${depthText(mt.depth)} · ${timeControlText(mt.time_control)} · ${mt.ply} moves${yours}`);
      }))));
  } catch (err) {
    showError(err);
  }
}

function practiceCard(go) {
  const saved = savedPractice();
  const form = h('form', { class: 'stack', 'aria-label': 'Practise against the CPU' },
    field('Board depth', select('depth', DEPTHS, saved.depth)),
    field('CPU level', select('cpu_level', LEVELS, saved.cpu_level)),
    field('Time control', select('time_control', TIME_CONTROLS.map(([id, label]) => [id, label]), saved.tc)),
    field('You play', select('seat', [['x', 'X (moves first)'], ['o', 'O']], saved.seat)),
    h('p', { class: 'form-error', role: 'alert' }),
    h('button', { type: 'submit', class: 'primary' }, 'Play the CPU'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const tc = TIME_CONTROLS.find(([id]) => id === data.get('time_control'))[2];
    formError(form, null);
    try {
      await startPractice({
        depth: Number(data.get('depth')),
        cpu_level: Number(data.get('cpu_level')),
        time_control: tc,
        seat: data.get('seat'),
      }, go);
    } catch (err) {
      formError(form, err);
    }
  });
  return h('div', { class: 'card' }, h('h2', {}, 'Practise against the CPU'), form);
}

function roomCard(go) {
  const create = h('form', { class: 'stack', 'aria-label': 'Open a room' },
    field('Board depth', select('depth', DEPTHS, 2)),
    field('Time control', select('time_control', TIME_CONTROLS.map(([id, label]) => [id, label]), 'clock-10')),
    h('p', { class: 'form-error', role: 'alert' }),
    h('button', { type: 'submit', class: 'primary' }, 'Open a room'));
  create.addEventListener('submit', async (e) => {
    e.preventDefault();
    const data = new FormData(create);
    formError(create, null);
    try {
      const room = await api.post('/rooms', {
        depth: Number(data.get('depth')),
        time_control: TIME_CONTROLS.find(([id]) => id === data.get('time_control'))[2],
      });
      go(`#/room/${room.code}`);
    } catch (err) {
      formError(create, err);
    }
  });
  const join = h('form', { class: 'stack join', 'aria-label': 'Join a room' },
    field('Room code', h('input', {
      name: 'code', required: true, minlength: 6, maxlength: 6, autocomplete: 'off',
      autocapitalize: 'characters', spellcheck: 'false', pattern: '[A-Za-z0-9]{6}', placeholder: 'ABC123',
    })),
    h('p', { class: 'form-error', role: 'alert' }),
    h('button', { type: 'submit' }, 'Join'));
  join.addEventListener('submit', async (e) => {
    e.preventDefault();
    const code = String(new FormData(join).get('code')).trim().toUpperCase();
    formError(join, null);
    try {
      const room = await api.post(`/rooms/${api.seg(code)}/join`);
      go(room.match_id ? `#/match/${room.match_id}` : `#/room/${room.code}`);
    } catch (err) {
      if (err.code === 'own_room') go(`#/room/${code}`);
      else formError(join, err.status === 404 ? { title: 'No room has this code' } : err);
    }
  });
  return h('div', { class: 'card' }, h('h2', {}, 'Play a friend'), create,
    h('h3', {}, 'Have a code?'), join);
}

async function loadLadders(box, go) {
  let ladders;
  try {
    ladders = await api.get('/ladders');
  } catch (err) {
    replace(box, h('p', { class: 'form-error' }, err.message));
    return;
  }
  const form = h('form', { class: 'stack', 'aria-label': 'Queue for a ranked match' },
    field('Ladder', select('ladder', ladders.map((l) => [l.id, `${l.name} · depth ${l.depth} · ${timeControlText(l.time_control)}`]), ladders[0]?.id)),
    h('p', { class: 'form-error', role: 'alert' }),
    h('button', { type: 'submit', class: 'primary' }, 'Find an opponent'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    formError(form, null);
    try {
      await startQueue(new FormData(form).get('ladder'), go);
    } catch (err) {
      formError(form, err);
    }
  });
  replace(box, h('p', { class: 'muted' }, 'Players are paired by rating; the accepted gap widens while you wait.'),
    form, h('p', {}, h('a', { href: '#/ladders' }, 'Leaderboards')));
}
