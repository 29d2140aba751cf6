// The Tournaments screen (API.md, "Tournaments"): the upcoming, running and
// finished tournaments, and a form to create one (its creator directs it).
// One tournament's own page is js/tournament.js.

import * as api from './api.js';
import { depthText, field, formError, h, replace, select, showError, timeControlText } from './dom.js';
import { DEPTHS, TIME_CONTROLS } from './lobby.js';

/** The lists shown, by status: [status, heading, what an empty list says]. */
const LISTS = [
  ['registering', 'Upcoming', 'No tournament is taking entries.'],
  ['running', 'Running', 'No tournament is being played.'],
  ['finished', 'Finished', 'No tournament has finished yet.'],
];
/** A tournament's games need a time limit, so that a no-show loses on time. */
const GAME_TIME_CONTROLS = TIME_CONTROLS.filter(([, , body]) => body.kind !== 'none');

/** When a tournament starts (or started), in words. */
export function startText(t) {
  if (!t.starts_at) return 'the director starts it';
  return new Date(t.starts_at).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
}

/** A tournament's settings in one line: kind, rounds, depth, time control, rating. */
export function settingsText(t) {
  const kind = t.kind === 'arena'
    ? `Arena · ${Math.round((t.duration_ms ?? 0) / 60_000)} min`
    : `Swiss · ${t.rounds} round${t.rounds === 1 ? '' : 's'}`;
  const rated = t.rated ? `rated on ${t.ladder}` : 'casual';
  return `${kind} · ${depthText(t.depth)} · ${timeControlText(t.time_control)} · ${rated}`;
}

/** Mounts the Tournaments screen into `root`. */
export function mount(root, go) {
  const lists = LISTS.map(([status, heading, empty]) => {
    const items = h('ul', { class: 'plain tournament-list', dataset: { status } });
    const more = h('div', {});
    const card = h('div', { class: 'card', dataset: { list: status } }, h('h2', {}, heading), items, more);
    page(status, items, more, empty, null);
    return card;
  });
  replace(root, h('section', { class: 'screen tournaments' },
    h('h1', {}, 'Tournaments'),
    h('div', { class: 'cards' }, lists, createCard(go))));
  return () => {};
}

async function page(status, items, more, empty, cursor) {
  try {
    const q = `?status=${status}&limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const body = await api.get(`/tournaments${q}`);
    if (!cursor && !body.items.length) items.append(h('li', { class: 'muted' }, empty));
    for (const t of body.items) {
      const when = t.status === 'registering' ? ` · starts: ${startText(t)}` : '';
      const round = t.status === 'running' && t.kind === 'swiss' ? ` · round ${t.round} of ${t.rounds}` : '';
      items.append(h('li', { dataset: { tournament: t.id } },
        h('a', { href: `#/tournaments/${encodeURIComponent(t.id)}` }, t.name),
        t.private ? h('span', { class: 'badge' }, 'entry code') : null,
        h('br'),
        h('span', { class: 'muted' }, `${settingsText(t)} · ${t.players} player${t.players === 1 ? '' : 's'}${round}${when}`)));
    }
    replace(more, body.next_cursor
      ? h('button', { type: 'button', class: 'secondary', onclick: () => page(status, items, more, empty, body.next_cursor) }, 'More')
      : null);
  } catch (err) {
    replace(more, h('p', { class: 'form-error' }, err.message));
  }
}

/** A number input's value, or undefined when left empty. */
function optionalNumber(data, name) {
  const text = String(data.get(name) ?? '').trim();
  return text === '' ? undefined : Number(text);
}

function createCard(go) {
  const ladderSelect = select('ladder', [['', 'None (casual)']], '');
  const settings = h('div', { class: 'stack' },
    field('Board depth', select('depth', DEPTHS, 2)),
    field('Time control', select('time_control', GAME_TIME_CONTROLS.map(([id, label]) => [id, label]), 'clock-10')));
  const kindSelect = select('kind', [['swiss', 'Swiss (fixed rounds)'], ['arena', 'Arena (fixed duration)']], 'swiss');
  const swiss = h('div', { class: 'stack' },
    field('Rounds', h('input', { name: 'rounds', type: 'number', min: 1, max: 30, value: 5 })),
    field('Pause between rounds (seconds)', h('input', { name: 'round_pause_s', type: 'number', min: 0, max: 3600, value: 10 })));
  const arena = h('div', { class: 'stack' },
    field('Duration (minutes)', h('input', { name: 'duration_min', type: 'number', min: 1, max: 1440, value: 60 })));
  const form = h('form', { class: 'stack', 'aria-label': 'Create a tournament' },
    field('Name', h('input', { name: 'name', required: true, maxlength: 80, autocomplete: 'off' })),
    field('Kind', kindSelect),
    swiss,
    arena,
    field('Rated on', ladderSelect),
    settings,
    field('Starts at (empty: you start it)', h('input', { name: 'starts_at', type: 'datetime-local' })),
    field('Most players (optional)', h('input', { name: 'max_players', type: 'number', min: 2, max: 10000 })),
    field('Entry code (optional: makes it private)', h('input', { name: 'entry_code', maxlength: 32, autocomplete: 'off', spellcheck: 'false' })),
    field('Minimum rating (optional)', h('input', { name: 'min_rating', type: 'number', step: 1 })),
    h('p', { class: 'form-error', role: 'alert' }),
    h('button', { type: 'submit', class: 'primary' }, 'Create the tournament'));
  // A ladder's own depth and time control apply: the fields would only mislead.
  // Only the fields of the chosen kind show.
  const sync = () => {
    settings.hidden = Boolean(ladderSelect.value);
    swiss.hidden = kindSelect.value !== 'swiss';
    arena.hidden = kindSelect.value !== 'arena';
  };
  ladderSelect.addEventListener('change', sync);
  kindSelect.addEventListener('change', sync);
  sync();
  api.get('/ladders').then((ladders) => {
    for (const l of ladders.filter((x) => x.rated)) {
      ladderSelect.append(h('option', { value: l.id }, `${l.name} · depth ${l.depth} · ${timeControlText(l.time_control)}`));
    }
  }).catch(showError);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const body = { name: String(data.get('name')).trim(), kind: data.get('kind') };
    if (body.kind === 'arena') {
      const minutes = optionalNumber(data, 'duration_min');
      if (minutes !== undefined) body.duration_ms = Math.round(minutes * 60_000);
    } else {
      body.rounds = optionalNumber(data, 'rounds');
      const pause = optionalNumber(data, 'round_pause_s');
      if (pause !== undefined) body.round_pause_ms = Math.round(pause * 1000);
    }
    if (data.get('ladder')) body.ladder = data.get('ladder');
    else {
      body.depth = Number(data.get('depth'));
      body.time_control = GAME_TIME_CONTROLS.find(([id]) => id === data.get('time_control'))[2];
    }
    const starts = String(data.get('starts_at') ?? '');
    if (starts) body.starts_at = new Date(starts).toISOString();
    body.max_players = optionalNumber(data, 'max_players');
    body.min_rating = optionalNumber(data, 'min_rating');
    const code = String(data.get('entry_code') ?? '').trim();
    if (code) body.entry_code = code;
    formError(form, null);
    try {
      const t = await api.post('/tournaments', body);
      go(`#/tournaments/${encodeURIComponent(t.id)}`);
    } catch (err) {
      // The API counts milliseconds; the form asks in seconds and minutes.
      const asked = { round_pause_ms: 'round_pause_s', duration_ms: 'duration_min' };
      for (const f of err.fields ?? []) f.field = asked[f.field] ?? f.field;
      formError(form, err);
    }
  });
  return h('div', { class: 'card', dataset: { list: 'create' } },
    h('h2', {}, 'Create a tournament'),
    h('p', { class: 'muted' }, 'You direct it: you start it (unless it starts at a set time), and may cancel it or remove a player.'),
    form);
}
